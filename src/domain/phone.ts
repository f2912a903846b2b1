import { type CountryCode, parsePhoneNumberWithError } from 'libphonenumber-js';
import { AppError } from './errors.ts';

/** Canonicalises a phone number to E.164 (`+` and digits). National numbers use `defaultCountry`. */
export function toE164(input: string, defaultCountry: string): string {
  const trimmed = input.trim();
  if (!trimmed) throw new AppError('invalid_input', 'phone_number is required');
  try {
    const phone = parsePhoneNumberWithError(trimmed, defaultCountry as CountryCode);
    if (!phone.isPossible()) throw new Error('not a possible number');
    return phone.number;
  } catch (error) {
    throw new AppError('invalid_input', `phone_number "${input}" is not a valid phone number`, { cause: error });
  }
}
