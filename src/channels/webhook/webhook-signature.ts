/**
 * `X-PromptPipe-Signature: sha256=<hex>`: an HMAC-SHA256 of the exact bytes of the HTTP body with
 * `PROMPTPIPE_WEBHOOK_SECRET`, in both directions. Signing the raw bytes (not re-serialised JSON) is what lets any
 * gateway, in any language, verify it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-promptpipe-signature';
const PREFIX = 'sha256=';

export function signBody(secret: string, body: string | Buffer): string {
  return `${PREFIX}${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Constant-time check of a signature header against the body. A missing or malformed header is simply false. */
export function verifySignature(secret: string, body: string | Buffer, header: string | undefined): boolean {
  if (!header?.startsWith(PREFIX)) return false;
  const expected = Buffer.from(signBody(secret, body));
  const received = Buffer.from(header.trim());
  return expected.length === received.length && timingSafeEqual(expected, received);
}
