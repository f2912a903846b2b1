/**
 * `X-Twilio-Signature`: checked with the official `twilio` package against the URL Twilio called, which is
 * `TWILIO_PUBLIC_URL` + the path (PromptPipe usually sits behind a proxy, so the request's own host is not it).
 */
import twilio from 'twilio';

export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

export function verifyTwilioSignature(
  authToken: string,
  url: string,
  params: Record<string, string>,
  header: string | undefined,
): boolean {
  if (!header) return false;
  return twilio.validateRequest(authToken, header, url, params);
}

/** What Twilio would send (tests and the fake). */
export function signTwilioRequest(authToken: string, url: string, params: Record<string, string>): string {
  return twilio.getExpectedTwilioSignature(authToken, url, params);
}
