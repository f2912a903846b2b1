/**
 * Staff passwords: scrypt from node:crypto (memory-hard, no native package), N=2^15, r=8, p=1 — about 32 MiB and a
 * few tens of milliseconds per hash, so a stolen database costs an attacker that much per guess. Stored as
 * `scrypt$<N>$<r>$<p>$<salt>$<hash>` (base64url), so the cost can rise later without invalidating old hashes.
 * Compared in constant time.
 */
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import { AppError } from '../domain/errors.ts';

const COST = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
export const MIN_PASSWORD_LENGTH = 12;

/** Passwords long enough to pass the length rule that are still among the first an attacker tries. */
const DENIED = new Set([
  'password1234',
  'password12345',
  'password123456',
  '123456789012',
  '1234567890123',
  'qwertyuiopas',
  'qwerty123456',
  'iloveyou1234',
  'letmein12345',
  'welcome12345',
  'administrator',
  'promptpipe123',
  'changeme1234',
  'passwordpassword',
  'aaaaaaaaaaaa',
]);

function derive(password: string, salt: Buffer, cost: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // maxmem above the default (32 MiB), which N=2^15, r=8 exactly reaches.
    scrypt(password, salt, KEY_LENGTH, { ...cost, maxmem: 64 * 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/** Throws `AppError('invalid_input')` naming the rule a password breaks. */
export function checkPasswordStrength(password: string, context: { email?: string } = {}): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new AppError('invalid_input', `the password must have at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (password.length > 1024) throw new AppError('invalid_input', 'the password is longer than 1024 characters');
  const lower = password.toLowerCase();
  if (DENIED.has(lower) || new Set(lower).size < 4) {
    throw new AppError('invalid_input', 'this password is too easy to guess: choose another');
  }
  const local = context.email?.split('@')[0]?.toLowerCase();
  if (local && local.length >= 4 && lower.includes(local)) {
    throw new AppError('invalid_input', 'the password must not contain the e-mail address');
  }
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash to verify against when the e-mail is unknown, so that the answer takes as long as for a known one. */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('base64url'));
  return decoy;
}
