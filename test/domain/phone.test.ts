import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import { toE164 } from '../../src/domain/phone.ts';

describe('toE164', () => {
  it('canonicalises international and national numbers, the same way every time', () => {
    expect(toE164(' +1 (416) 555-0101 ', 'US')).toBe('+14165550101');
    expect(toE164('416 555 0101', 'CA')).toBe('+14165550101');
    // Answered from the memo the second time: still the same number.
    expect(toE164('416 555 0101', 'CA')).toBe('+14165550101');
  });

  it('reads one national number per default country (the memo is keyed by both)', () => {
    expect(toE164('020 7946 0958', 'GB')).toBe('+442079460958');
    expect(toE164('030 1234567', 'DE')).toBe('+49301234567');
    expect(() => toE164('020 7946 0958', 'US')).toThrow(AppError);
    expect(toE164('020 7946 0958', 'GB')).toBe('+442079460958');
  });

  it('refuses empty and impossible numbers every time, never remembering them', () => {
    expect(() => toE164('   ', 'US')).toThrow('phone_number is required');
    for (let attempt = 0; attempt < 2; attempt += 1) {
      expect(() => toE164('12', 'US')).toThrow('phone_number "12" is not a valid phone number: write it in');
      expect(() => toE164('call me', 'US')).toThrow(AppError);
    }
  });

  it("reads a digits-only number with its country code (the original PromptPipe's stored form) as international", () => {
    expect(toE164('447911123456', 'US')).toBe('+447911123456');
    expect(toE164('4930123456', 'US')).toBe('+4930123456');
    // A digits-only number that is a real national number stays national; the US country code reads either way.
    expect(toE164('2125550123', 'US')).toBe('+12125550123');
    expect(toE164('15551234567', 'US')).toBe('+15551234567');
  });

  it('says how to write a number it cannot read, naming the field', () => {
    expect(() => toE164('invalid-phone', 'US', 'to')).toThrow(
      'to "invalid-phone" is not a valid phone number: write it in international form with its country code, ' +
        'e.g. +447911123456 (or 447911123456, digits only), or as a national number of DEFAULT_COUNTRY (US)',
    );
  });
});
