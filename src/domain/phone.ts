import { type CountryCode, type PhoneNumber, parsePhoneNumberWithError } from 'libphonenumber-js';
import { LRUCache } from 'lru-cache';
import { AppError } from './errors.ts';

/**
 * Numbers already canonicalised, by default country and input: every inbound message looks its sender up by number,
 * and parsing one costs more than the rest of that look-up. Bounded; the least recently used entry goes first.
 */
const canonical = new LRUCache<string, string>({ max: 10_000 });

/** Only digits: how the original PromptPipe stored numbers (country code included, no `+`). */
const DIGITS_ONLY = /^\d+$/;

function parse(text: string, defaultCountry?: string): PhoneNumber | undefined {
  try {
    return defaultCountry === undefined
      ? parsePhoneNumberWithError(text)
      : parsePhoneNumberWithError(text, defaultCountry as CountryCode);
  } catch {
    return undefined;
  }
}

/**
 * A digits-only number is either national (`2125550123` in the US) or international without its `+`
 * (`447911123456`, the original PromptPipe's stored form). The reading that is a real number wins, national first
 * (a study's own numbers); failing that, the one that is at least possible, national first again.
 */
function parseDigitsOnly(digits: string, defaultCountry: string): PhoneNumber | undefined {
  const national = parse(digits, defaultCountry);
  const international = parse(`+${digits}`);
  if (national?.isValid()) return national;
  if (international?.isValid()) return international;
  if (national?.isPossible()) return national;
  if (international?.isPossible()) return international;
  return undefined;
}

/** How to write a number, for error messages. */
export function phoneNumberHint(defaultCountry: string): string {
  return (
    'write it in international form with its country code, e.g. +447911123456 (or 447911123456, digits only), ' +
    `or as a national number of DEFAULT_COUNTRY (${defaultCountry})`
  );
}

/**
 * Canonicalises a phone number to E.164 (`+` and digits). National numbers use `defaultCountry`; a digits-only
 * number may also carry its country code without the `+` (see `parseDigitsOnly`). `field` names the input in the
 * error message (`to`, `from`…).
 */
export function toE164(input: string, defaultCountry: string, field = 'phone_number'): string {
  const trimmed = input.trim();
  if (!trimmed) throw new AppError('invalid_input', `${field} is required`);
  const key = `${defaultCountry} ${trimmed}`;
  const known = canonical.get(key);
  if (known !== undefined) return known;
  const phone = DIGITS_ONLY.test(trimmed) ? parseDigitsOnly(trimmed, defaultCountry) : parse(trimmed, defaultCountry);
  if (!phone?.isPossible()) {
    throw new AppError(
      'invalid_input',
      `${field} "${input}" is not a valid phone number: ${phoneNumberHint(defaultCountry)}`,
    );
  }
  const number = phone.number;
  canonical.set(key, number);
  return number;
}
