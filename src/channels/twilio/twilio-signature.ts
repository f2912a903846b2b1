/**
 * `X-Twilio-Signature`: checked with the official `twilio` package against the URL Twilio called, which is
 * `TWILIO_PUBLIC_URL` + the path (PromptPipe usually sits behind a proxy, so the request's own host is not it).
 */
// Only the webhook half of the SDK: the package's entry point loads every REST API (about 30 MB of memory).
import { getExpectedTwilioSignature, validateRequest } from 'twilio/lib/webhooks/webhooks.js';

export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

export function verifyTwilioSignature(
  authToken: string,
  url: string,
  params: Record<string, string>,
  header: string | undefined,
): boolean {
  if (!header) return false;
  return validateRequest(authToken, header, url, params);
}

/** What Twilio would send (tests and the fake). */
export function signTwilioRequest(authToken: string, url: string, params: Record<string, string>): string {
  return getExpectedTwilioSignature(authToken, url, params);
}
