/**
 * Meta signs every webhook POST with `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body, keyed with the
 * app secret>`. Checked over the exact bytes received, in constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const WHATSAPP_SIGNATURE_HEADER = 'x-hub-signature-256';

export function signWhatsAppBody(appSecret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`;
}

export function verifyWhatsAppSignature(appSecret: string, body: Buffer, header: string | undefined): boolean {
  if (!header?.startsWith('sha256=')) return false;
  const expected = Buffer.from(signWhatsAppBody(appSecret, body));
  const received = Buffer.from(header.trim().toLowerCase());
  return expected.length === received.length && timingSafeEqual(expected, received);
}
