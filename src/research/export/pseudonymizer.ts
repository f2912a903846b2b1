/**
 * Pseudonymised exports (`export --pseudonymize`, `GET /export/…?pseudonymize=true`): phone numbers become a keyed hash (HMAC-SHA-256 with `EXPORT_PSEUDONYM_KEY`, first 16 hex
 * characters, prefixed `pn_`), names are dropped, free text is kept. The same key gives the same pseudonym in every
 * export, so exports can be joined; without the key a pseudonym cannot be reversed or recomputed.
 */
import { createHmac } from 'node:crypto';
import { AppError } from '../../domain/errors.ts';

export interface Pseudonymizer {
  phone(phoneNumber: string): string;
  /** A JSON value with phone-number fields hashed and name fields removed. */
  json<T>(value: T): T;
}

/** JSON keys that hold a phone number (outbound `to`, inbound `from`…). */
const PHONE_KEYS = new Set(['to', 'from', 'from_phone', 'phone', 'phone_number', 'phoneNumber']);
const NAME_KEYS = new Set(['name']);

/**
 * `requestedBy` names how the caller asked, in its own words (`--pseudonymize` on the command line,
 * `pseudonymize=true` over HTTP), so that the error when the key is missing points at what the reader typed.
 */
export function createPseudonymizer(key: string | undefined, options: { requestedBy?: string } = {}): Pseudonymizer {
  if (!key) {
    const asked = options.requestedBy ?? 'pseudonymising';
    throw new AppError(
      'invalid_input',
      `${asked} needs EXPORT_PSEUDONYM_KEY (the secret key of the phone hash), which this server does not have`,
    );
  }
  const phone = (phoneNumber: string): string =>
    phoneNumber === '' ? '' : `pn_${createHmac('sha256', key).update(phoneNumber, 'utf8').digest('hex').slice(0, 16)}`;

  function walk(value: unknown): unknown {
    if (Array.isArray(value)) return value.map(walk);
    if (value && typeof value === 'object') {
      const result: Record<string, unknown> = {};
      for (const [name, child] of Object.entries(value)) {
        if (NAME_KEYS.has(name)) continue;
        result[name] = PHONE_KEYS.has(name) && typeof child === 'string' ? phone(child) : walk(child);
      }
      return result;
    }
    return value;
  }

  return { phone, json: <T>(value: T) => walk(value) as T };
}
