/**
 * The random secrets of staff access — personal API tokens, session cookies, invitation links — and their stored
 * digests. Each is 32 random bytes; only its SHA-256 reaches the database, so a copy of the database (or a backup, or
 * an export) opens nothing. SHA-256 without a salt is enough here: unlike a password, 256 random bits cannot be guessed.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function digest(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

export function sameDigest(expected: string, presented: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A personal API token as shown once: `pp_<id>_<secret>`; the id finds the row, the secret proves possession. */
export function formatApiToken(id: string, secret: string): string {
  return `pp_${id}_${secret}`;
}

export function parseApiToken(presented: string): { id: string; secret: string } | undefined {
  const match = /^pp_([A-Za-z0-9]{8,40})_([A-Za-z0-9_-]{20,100})$/.exec(presented);
  return match?.[1] && match[2] ? { id: match[1], secret: match[2] } : undefined;
}

/** A token id: letters and digits only, so that `_` can separate it from the secret. */
export function newTokenId(): string {
  return randomBytes(9).toString('hex');
}
