/**
 * `X-PromptPipe-Signature: sha256=<hex>` with `X-PromptPipe-Timestamp: <Unix seconds>`: an HMAC-SHA256, with
 * `PROMPTPIPE_WEBHOOK_SECRET`, of `<timestamp>.<body>` — the timestamp as sent, a dot, then the exact bytes of the
 * HTTP body — in both directions (Stripe's and Slack's scheme). Signing the raw bytes (not re-serialised JSON) is
 * what lets any gateway, in any language, verify it; signing the time with them is what lets the receiver refuse a
 * captured request replayed later (channels/webhook/webhook-replay-window.ts). The webhook channel, its inbound route
 * and the alert webhook all sign this way.
 *
 * The older form, an HMAC of the body alone (no timestamp header), is still accepted inbound when the signed body
 * carries its own `timestamp`: that time is then covered by the signature too.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-promptpipe-signature';
export const TIMESTAMP_HEADER = 'x-promptpipe-timestamp';
const PREFIX = 'sha256=';

/** The bytes the signature covers: `<timestamp>.<body>`, or the body alone (the older form). */
export function signedContent(body: string | Buffer, timestamp?: string): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return timestamp === undefined ? bytes : Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), bytes]);
}

/** `sha256=<hex>` of the body, with the timestamp in front when there is one. */
export function signBody(secret: string, body: string | Buffer, timestamp?: string): string {
  return `${PREFIX}${createHmac('sha256', secret).update(signedContent(body, timestamp)).digest('hex')}`;
}

/** Constant-time check of a signature header. A missing or malformed header is simply false. */
export function verifySignature(
  secret: string,
  body: string | Buffer,
  header: string | undefined,
  timestamp?: string,
): boolean {
  if (!header?.startsWith(PREFIX)) return false;
  const expected = Buffer.from(signBody(secret, body, timestamp));
  const received = Buffer.from(header.trim());
  return expected.length === received.length && timingSafeEqual(expected, received);
}

/** Whole seconds since the Unix epoch, as the timestamp header carries them. */
export function unixSeconds(time: Date): string {
  return String(Math.floor(time.getTime() / 1000));
}

/** The two headers of a request signed at `time`. */
export function signatureHeaders(secret: string, body: string | Buffer, time: Date): Record<string, string> {
  const timestamp = unixSeconds(time);
  return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signBody(secret, body, timestamp) };
}

/**
 * The dedup id of a signed message that names none: the SHA-256 of exactly what was signed. The very same signed
 * request posted again (a replay, or a gateway repeating it) is recognised; the same words sent again later are not,
 * because their signing time differs.
 */
export function derivedMessageId(content: Buffer): string {
  return `signed-sha256:${createHash('sha256').update(content).digest('hex')}`;
}
