import { type CountryCode, parsePhoneNumberWithError } from 'libphonenumber-js';
import { AppError } from './errors.ts';

/**
 * Numbers already canonicalised, by default country and input: every inbound message looks its sender up by number,
 * and parsing one costs more than the rest of that look-up. Bounded; the oldest entry goes first.
 */
const canonical = new Map<string, string>();
const CANONICAL_CAPACITY = 10_000;

/** Canonicalises a phone number to E.164 (`+` and digits). National numbers use `defaultCountry`. */
export function toE164(input: string, defaultCountry: string): string {
  const trimmed = input.trim();
  if (!trimmed) throw new AppError('invalid_input', 'phone_number is required');
  const key = `${defaultCountry} ${trimmed}`;
  const known = canonical.get(key);
  if (known !== undefined) return known;
  let number: string;
  try {
    const phone = parsePhoneNumberWithError(trimmed, defaultCountry as CountryCode);
    if (!phone.isPossible()) throw new Error('not a possible number');
    number = phone.number;
  } catch (error) {
    throw new AppError('invalid_input', `phone_number "${input}" is not a valid phone number`, { cause: error });
  }
  if (canonical.size >= CANONICAL_CAPACITY) canonical.delete(canonical.keys().next().value as string);
  canonical.set(key, number);
  return number;
}
