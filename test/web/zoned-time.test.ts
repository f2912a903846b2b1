/** Which zone a participant's times are shown in, and how they read. */
import { describe, expect, it } from 'vitest';
import { participantTimeZone, zonedTime } from '../../src/web/zoned-time.ts';

describe('participantTimeZone', () => {
  it("takes the participant's zone, else their schedule's, else UTC; unknown zones fall through", () => {
    expect(participantTimeZone({ timezone: 'europe/berlin' }, [{ timezone: 'Asia/Tokyo' }])).toBe('Europe/Berlin');
    expect(participantTimeZone({ timezone: '' }, [{ timezone: 'America/Toronto' }])).toBe('America/Toronto');
    expect(participantTimeZone({ timezone: 'Mars/Olympus' }, [])).toBe('UTC');
    expect(participantTimeZone({ timezone: '' })).toBe('UTC');
  });
});

describe('zonedTime', () => {
  it('shows the wall clock of the zone, across a daylight-saving change', () => {
    // Berlin moves from UTC+1 to UTC+2 on Sun 29 Mar 2026.
    expect(zonedTime(new Date('2026-03-28T07:50:00Z'), 'Europe/Berlin')).toBe('Sat 28 Mar, 08:50');
    expect(zonedTime(new Date('2026-03-30T07:50:00Z'), 'Europe/Berlin')).toBe('Mon 30 Mar, 09:50');
    expect(zonedTime(new Date('2026-03-03T02:30:00Z'), 'America/Toronto')).toBe('Mon 2 Mar, 21:30');
  });

  it('adds the year only when it is not the year of now in that zone', () => {
    const now = new Date('2026-12-31T23:30:00Z');
    // Already 2027 in Berlin: a time late on 31 Dec 2026 (Berlin) is another year there.
    expect(zonedTime(new Date('2026-12-31T20:00:00Z'), 'Europe/Berlin', now)).toBe('Thu, 31 Dec 2026, 21:00');
    expect(zonedTime(new Date('2026-12-31T20:00:00Z'), 'UTC', now)).toBe('Thu 31 Dec, 20:00');
    expect(zonedTime(new Date('2027-01-01T08:00:00Z'), 'Europe/Berlin', now)).toBe('Fri 1 Jan, 09:00');
  });
});
