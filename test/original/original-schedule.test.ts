/**
 * The original's schedule fields read as cron fields in a time zone: the next run is the first matching minute
 * strictly after now (today included), an omitted field matches every value, and the wall clock of the zone decides.
 */
import { describe, expect, it } from 'vitest';
import { parseCronSchedule } from '../../src/domain/original-schedule.ts';
import { formatGoDuration } from '../../src/original/go-duration.ts';
import {
  describeSchedule,
  nextRunAfter,
  scheduleProblems,
  toCronString,
} from '../../src/original/original-schedule.ts';

const at = (iso: string) => new Date(iso);

describe('nextRunAfter', () => {
  it('fires later today when the time is still ahead, tomorrow when it is past', () => {
    const schedule = { hour: 18, minute: 0, timezone: 'America/Toronto' };
    expect(nextRunAfter(schedule, at('2026-03-02T14:00:00Z'))?.toISOString()).toBe('2026-03-02T23:00:00.000Z');
    expect(nextRunAfter(schedule, at('2026-03-02T23:00:00Z'))?.toISOString()).toBe('2026-03-03T23:00:00.000Z');
  });

  it('reads an empty schedule as every minute and an omitted minute as every minute of the hour', () => {
    expect(nextRunAfter({}, at('2026-03-02T14:00:30Z'))?.toISOString()).toBe('2026-03-02T14:01:00.000Z');
    expect(nextRunAfter({ hour: 15 }, at('2026-03-02T15:10:00Z'))?.toISOString()).toBe('2026-03-02T15:11:00.000Z');
    expect(nextRunAfter({ hour: 15 }, at('2026-03-02T15:59:00Z'))?.toISOString()).toBe('2026-03-03T15:00:00.000Z');
  });

  it('uses UTC without a zone and matches month, day and weekday (Sunday = 0) together', () => {
    expect(nextRunAfter({ month: 1, day: 1, hour: 0, minute: 0 }, at('2026-03-02T14:00:00Z'))?.toISOString()).toBe(
      '2027-01-01T00:00:00.000Z',
    );
    // 2026-03-08 is a Sunday.
    expect(nextRunAfter({ weekday: 0, hour: 10, minute: 0 }, at('2026-03-02T14:00:00Z'))?.toISOString()).toBe(
      '2026-03-08T10:00:00.000Z',
    );
    expect(nextRunAfter({ day: 29, month: 2, hour: 0, minute: 0 }, at('2026-03-02T14:00:00Z'))?.toISOString()).toBe(
      '2028-02-29T00:00:00.000Z',
    );
  });

  it('keeps the local time across a daylight-saving change and moves a skipped minute to the end of the gap', () => {
    const nine = { hour: 9, minute: 0, timezone: 'America/Toronto' };
    expect(nextRunAfter(nine, at('2026-03-07T15:00:00Z'))?.toISOString()).toBe('2026-03-08T13:00:00.000Z');
    const gap = { hour: 2, minute: 30, timezone: 'America/Toronto' };
    expect(nextRunAfter(gap, at('2026-03-08T05:00:00Z'))?.toISOString()).toBe('2026-03-08T07:00:00.000Z');
  });

  it('finds no run for a day that does not exist', () => {
    expect(nextRunAfter({ month: 2, day: 31 }, at('2026-03-02T14:00:00Z'))).toBeUndefined();
  });
});

describe('schedule validation and text', () => {
  it('names every field out of range and an unknown zone', () => {
    expect(scheduleProblems({ minute: 60, hour: -1, day: 0, month: 13, weekday: 7, timezone: 'Nowhere/City' })).toEqual(
      [
        'schedule.minute must be an integer from 0 to 59 (got 60)',
        'schedule.hour must be an integer from 0 to 23 (got -1)',
        'schedule.day must be an integer from 1 to 31 (got 0)',
        'schedule.month must be an integer from 1 to 12 (got 13)',
        'schedule.weekday must be an integer from 0 to 6 (Sunday=0) (got 7)',
        'schedule.timezone "Nowhere/City" is not an IANA time zone such as "America/Toronto"',
      ],
    );
    expect(scheduleProblems({ minute: 1.5 })).toHaveLength(1);
    expect(scheduleProblems({ hour: 9, minute: 0, timezone: 'Europe/London' })).toEqual([]);
  });

  it('reads DEFAULT_SCHEDULE as five fields and refuses anything else', () => {
    expect(parseCronSchedule('0 9 * * 1')).toEqual({ schedule: { minute: 0, hour: 9, weekday: 1 } });
    expect(parseCronSchedule('0 9 * *')).toMatchObject({ problem: expect.stringContaining('five fields') });
    expect(parseCronSchedule('0 9-17 * * *')).toMatchObject({ problem: expect.stringContaining('hour') });
    expect(parseCronSchedule('0 25 * * *')).toMatchObject({ problem: expect.stringContaining('0 to 23') });
  });

  it('writes a schedule as cron fields and as words', () => {
    expect(toCronString({ minute: 0, hour: 9 })).toBe('0 9 * * *');
    expect(describeSchedule({})).toBe('every minute (UTC)');
    expect(describeSchedule({ hour: 9, timezone: 'Europe/London' })).toBe('hour=9 (Europe/London)');
  });

  it('writes durations as Go does', () => {
    expect(formatGoDuration(0)).toBe('0s');
    expect(formatGoDuration(45_999)).toBe('45s');
    expect(formatGoDuration(300_000)).toBe('5m0s');
    expect(formatGoDuration(93_784_000)).toBe('26h3m4s');
  });
});
