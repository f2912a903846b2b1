import { describe, expect, it } from 'vitest';
import { fromTimestamp, toOptionalTimestamp, toTimestamp } from '../../src/store/kysely/column-codecs.ts';

describe('timestamp columns (column-codecs.ts)', () => {
  it('writes each instant as its own ISO text, however the instants repeat and alternate', () => {
    const a = new Date('2026-03-02T14:00:00.000Z');
    const b = new Date('2026-03-02T14:00:00.001Z');
    expect([a, a, b, a, b, b].map(toTimestamp)).toEqual([
      '2026-03-02T14:00:00.000Z',
      '2026-03-02T14:00:00.000Z',
      '2026-03-02T14:00:00.001Z',
      '2026-03-02T14:00:00.000Z',
      '2026-03-02T14:00:00.001Z',
      '2026-03-02T14:00:00.001Z',
    ]);
    expect(toOptionalTimestamp(undefined)).toBeNull();
    expect(toOptionalTimestamp(b)).toBe('2026-03-02T14:00:00.001Z');
  });

  it('refuses an invalid date every time, even right after a valid one', () => {
    toTimestamp(new Date('2026-03-02T14:00:00.000Z'));
    expect(() => toTimestamp(new Date('not a date'))).toThrow(RangeError);
    expect(() => toTimestamp(new Date(Number.NaN))).toThrow(RangeError);
  });

  it('reads each text as its instant, into a new Date every time', () => {
    const first = fromTimestamp('2026-03-02T14:00:00.000Z');
    first.setUTCFullYear(1999);
    expect(fromTimestamp('2026-03-02T14:00:00.000Z').toISOString()).toBe('2026-03-02T14:00:00.000Z');
    expect(fromTimestamp('2026-03-02T14:00:00.500Z').getTime()).toBe(Date.UTC(2026, 2, 2, 14, 0, 0, 500));
    expect(fromTimestamp('2026-03-02T14:00:00.000Z').getTime()).toBe(Date.UTC(2026, 2, 2, 14));
    const stored = new Date('2026-03-02T15:00:00.000Z');
    const read = fromTimestamp(stored);
    expect(read).toEqual(stored);
    expect(read).not.toBe(stored);
    expect(Number.isNaN(fromTimestamp('garbage').getTime())).toBe(true);
    expect(Number.isNaN(fromTimestamp('garbage').getTime())).toBe(true);
  });
});
