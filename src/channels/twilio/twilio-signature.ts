/**
 * `X-Twilio-Signature`: checked with the official `twilio` package's public `validateRequest` against the URL Twilio
 * called, which is `TWILIO_PUBLIC_URL` + the path (PromptPipe usually sits behind a proxy, so the request's own host
 * is not it).
 *
 * The package is imported when the Twilio routes are registered, so only a server with the twilio channel on loads
 * it. Its entry point loads the REST client too (more memory than the webhook module alone, docs/benchmarks.md), but
 * an internal path of a package may move in any release; its public API may not.
 */

export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

/** Whether `header` is Twilio's signature of a request to `url` with these form `params`. */
export type TwilioSignatureCheck = (
  authToken: string,
  url: string,
  params: Record<string, string>,
  header: string | undefined,
) => boolean;

export async function loadTwilioSignatureCheck(): Promise<TwilioSignatureCheck> {
  const { validateRequest } = (await import('twilio')).default;
  return (authToken, url, params, header) => Boolean(header) && validateRequest(authToken, header ?? '', url, params);
}
