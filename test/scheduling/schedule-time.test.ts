import { describe, expect, it } from 'vitest';
import { parseLocalTime } from '../../src/domain/local-time.ts';
import {
  addLocalDays,
  canonicalTimeZone,
  compareLocalDates,
  formatLocalInstant,
  instantAtLocalTime,
  isValidTimeZone,
  localDateOf,
  nextOccurrence,
  randomTimeInWindow,
} from '../../src/scheduling/schedule-time.ts';
import { seededRandom } from './scheduling-fixtures.ts';

const TORONTO = 'America/Toronto';
const NINE = { hour: 9, minute: 0 };

// 2026 in Toronto: clocks spring forward on Sunday 8 March (02:00 EST → 03:00 EDT) and fall back on Sunday
// 1 November (02:00 EDT → 01:00 EST).

describe('local times', () => {
  it('parses strict 24-hour HH:MM only', () => {
    expect(parseLocalTime('09:00')).toEqual({ hour: 9, minute: 0 });
    expect(parseLocalTime('23:59')).toEqual({ hour: 23, minute: 59 });
    for (const invalid of ['9:00', '24:00', '12:60', '0900', '09:00:00', 'nine', '']) {
      expect(parseLocalTime(invalid), invalid).toBeUndefined();
    }
  });

  it('validates and canonicalises IANA zones, refusing fixed offsets', () => {
    expect(canonicalTimeZone('america/toronto')).toBe('America/Toronto');
    expect(canonicalTimeZone('UTC')).toBe('UTC');
    expect(isValidTimeZone('Europe/Paris')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isValidTimeZone('+05:00')).toBe(false);
    expect(isValidTimeZone('')).toBe(false);
  });

  it('gives the local calendar date in the zone, not in UTC', () => {
    // 03:00 UTC on 8 March is still 22:00 on 7 March in Toronto.
    expect(localDateOf(new Date('2026-03-08T03:00:00Z'), TORONTO)).toBe('2026-03-07');
    expect(localDateOf(new Date('2026-03-08T03:00:00Z'), 'UTC')).toBe('2026-03-08');
    expect(addLocalDays('2026-02-28', 1)).toBe('2026-03-01');
    expect(compareLocalDates('2026-03-07', '2026-03-08')).toBeLessThan(0);
  });
});

describe('daylight-saving changes in America/Toronto', () => {
  it('keeps 09:00 local across spring forward: 14:00Z on Saturday, 13:00Z on Sunday (a 23-hour day)', () => {
    expect(instantAtLocalTime('2026-03-07', NINE, TORONTO)).toEqual(new Date('2026-03-07T14:00:00Z'));
    expect(instantAtLocalTime('2026-03-08', NINE, TORONTO)).toEqual(new Date('2026-03-08T13:00:00Z'));
    expect(nextOccurrence(new Date('2026-03-07T14:00:00Z'), NINE, TORONTO)).toEqual(new Date('2026-03-08T13:00:00Z'));
  });

  it('keeps 09:00 local across fall back: 13:00Z on Saturday, 14:00Z on Sunday (a 25-hour day)', () => {
    expect(instantAtLocalTime('2026-10-31', NINE, TORONTO)).toEqual(new Date('2026-10-31T13:00:00Z'));
    expect(nextOccurrence(new Date('2026-10-31T13:00:00Z'), NINE, TORONTO)).toEqual(new Date('2026-11-01T14:00:00Z'));
  });

  it('moves a time inside the spring-forward gap to the first valid minute (02:30 → 03:00 EDT)', () => {
    const halfPastTwo = { hour: 2, minute: 30 };
    expect(instantAtLocalTime('2026-03-08', halfPastTwo, TORONTO)).toEqual(new Date('2026-03-08T07:00:00Z'));
    expect(formatLocalInstant(new Date('2026-03-08T07:00:00Z'), TORONTO)).toBe(
      '2026-03-08 03:00 (America/Toronto, UTC-04:00)',
    );
    // From 01:00 EST that night, the next 02:30 is that same 03:00, and the day after it is a normal 02:30 EDT.
    expect(nextOccurrence(new Date('2026-03-08T06:00:00Z'), halfPastTwo, TORONTO)).toEqual(
      new Date('2026-03-08T07:00:00Z'),
    );
    expect(nextOccurrence(new Date('2026-03-08T07:00:00Z'), halfPastTwo, TORONTO)).toEqual(
      new Date('2026-03-09T06:30:00Z'),
    );
  });

  it('takes the earlier instant of a time that happens twice at fall back (01:30 EDT, not 01:30 EST)', () => {
    expect(instantAtLocalTime('2026-11-01', { hour: 1, minute: 30 }, TORONTO)).toEqual(
      new Date('2026-11-01T05:30:00Z'),
    );
    // The second 01:30 that night is not another occurrence: the next one is the following day's.
    expect(nextOccurrence(new Date('2026-11-01T05:30:00Z'), { hour: 1, minute: 30 }, TORONTO)).toEqual(
      new Date('2026-11-02T06:30:00Z'),
    );
  });
});

describe('remembered results', () => {
  it('answers a repeated question the same, with a Date of its own each time', () => {
    const first = instantAtLocalTime('2026-03-08', { hour: 2, minute: 30 }, 'America/Toronto');
    first.setTime(0);
    const again = instantAtLocalTime('2026-03-08', { hour: 2, minute: 30 }, 'America/Toronto');
    expect(again.toISOString()).toBe('2026-03-08T07:00:00.000Z');
    expect(instantAtLocalTime('2026-03-08', { hour: 2, minute: 30 }, 'Europe/Paris').toISOString()).toBe(
      '2026-03-08T01:30:00.000Z',
    );
    expect(addLocalDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addLocalDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addLocalDays('2026-12-31', -1)).toBe('2026-12-30');
    expect([compareLocalDates('2026-01-02', '2026-01-10'), compareLocalDates('2026-01-10', '2026-01-02')]).toEqual([
      -1, 1,
    ]);
  });

  it('keeps refusing bad arguments when asked again, NUL characters included', () => {
    expect(canonicalTimeZone('america/toronto')).toBe('America/Toronto');
    expect(canonicalTimeZone('america/toronto\0')).toBeUndefined();
    expect(() => compareLocalDates('2026-01-02\0', '2026-01-03')).toThrow(RangeError);
    expect(() => compareLocalDates('2026-01-02', '\x1026-01-03')).toThrow(RangeError);
    expect(() => compareLocalDates('2026-02-30', '2026-03-01')).toThrow(RangeError);
    expect(() => compareLocalDates('2026-02-30', '2026-03-01')).toThrow(RangeError);
    expect(() => instantAtLocalTime('2026-03-08', { hour: 9, minute: 0 }, 'Nowhere/City')).toThrow(RangeError);
    expect(() => instantAtLocalTime('2026-03-08', { hour: 9, minute: 0 }, 'Nowhere/City')).toThrow(RangeError);
  });
});

describe('nextOccurrence', () => {
  it('is strictly after the given instant and decided on the local date', () => {
    // 23:30 in Toronto on 2 March is already 3 March in UTC; the next 09:00 is on 3 March, Toronto time.
    expect(nextOccurrence(new Date('2026-03-03T04:30:00Z'), NINE, TORONTO)).toEqual(new Date('2026-03-03T14:00:00Z'));
    expect(nextOccurrence(new Date('2026-03-03T14:00:00Z'), NINE, TORONTO)).toEqual(new Date('2026-03-04T14:00:00Z'));
  });
});

describe('randomTimeInWindow', () => {
  const start = { hour: 10, minute: 0 };
  const end = { hour: 12, minute: 0 };

  it('stays inside the window, both ends included', () => {
    expect(randomTimeInWindow(start, end, () => 0)).toEqual(start);
    expect(randomTimeInWindow(start, end, () => 0.999_999)).toEqual(end);
    const random = seededRandom(42);
    for (let draw = 0; draw < 500; draw += 1) {
      const time = randomTimeInWindow(start, end, random);
      const minutes = time.hour * 60 + time.minute;
      expect(minutes).toBeGreaterThanOrEqual(600);
      expect(minutes).toBeLessThanOrEqual(720);
    }
  });

  it('draws genuinely different minutes (not always the window start)', () => {
    const random = seededRandom(7);
    const draws = new Set(Array.from({ length: 20 }, () => JSON.stringify(randomTimeInWindow(start, end, random))));
    expect(draws.size).toBeGreaterThan(10);
  });

  it('refuses a window that ends before it starts', () => {
    expect(() => randomTimeInWindow(end, start, Math.random)).toThrow(RangeError);
  });
});
