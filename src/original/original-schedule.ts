/**
 * When the original PromptPipe's `Schedule` (domain/original-schedule.ts: cron-like fields in an IANA time zone, an
 * omitted field meaning "any") runs, and how it reads in a timer's description. Pure.
 *
 * Deliberately unlike the original's timer, which was broken in two ways (docs/migrating.md): it never fired on the
 * day the schedule was made (its search started tomorrow) and it read an omitted hour or minute as 0 (so `{}` meant
 * "daily at midnight", not "every minute" as its documentation says). Here the next run is the first matching minute
 * strictly after now, today included, and an omitted field matches every value.
 */
import { Temporal } from 'temporal-polyfill';
import { type OriginalSchedule, SCHEDULE_FIELDS, scheduleFieldProblems } from '../domain/original-schedule.ts';
import { addLocalDays, canonicalTimeZone, instantAtLocalTime, localDateOf } from '../scheduling/schedule-time.ts';

/** Eight years: the longest wait between two matching days (29 February on a given weekday is rarer, and refused). */
const MAX_DAYS_AHEAD = 366 * 8;

/** What is wrong with a schedule, one clause per field; empty when it is valid. */
export function scheduleProblems(schedule: OriginalSchedule): string[] {
  const problems = scheduleFieldProblems(schedule);
  if (schedule.timezone && !canonicalTimeZone(schedule.timezone)) {
    problems.push(`schedule.timezone "${schedule.timezone}" is not an IANA time zone such as "America/Toronto"`);
  }
  return problems;
}

/** The schedule's zone, canonical; UTC when none is set (as in the original). */
export function scheduleTimeZone(schedule: OriginalSchedule): string {
  return (schedule.timezone && canonicalTimeZone(schedule.timezone)) || 'UTC';
}

function dayMatches(schedule: OriginalSchedule, localDate: string): boolean {
  const date = Temporal.PlainDate.from(localDate);
  if (schedule.month !== undefined && date.month !== schedule.month) return false;
  if (schedule.day !== undefined && date.day !== schedule.day) return false;
  // Temporal numbers Monday 1 … Sunday 7; the original Sunday 0 … Saturday 6.
  if (schedule.weekday !== undefined && date.dayOfWeek % 7 !== schedule.weekday) return false;
  return true;
}

function valuesOf(value: number | undefined, count: number): number[] {
  return value === undefined ? Array.from({ length: count }, (_, index) => index) : [value];
}

/**
 * The first instant strictly after `after` whose wall clock in the schedule's zone matches every set field, or
 * undefined when no day within eight years matches (31 February). A minute that a spring-forward gap skips fires at
 * the end of the gap, as daily prompts do.
 */
export function nextRunAfter(schedule: OriginalSchedule, after: Date): Date | undefined {
  const timeZone = scheduleTimeZone(schedule);
  const hours = valuesOf(schedule.hour, 24);
  const minutes = valuesOf(schedule.minute, 60);
  let localDate = localDateOf(after, timeZone);
  for (let day = 0; day < MAX_DAYS_AHEAD; day += 1) {
    if (dayMatches(schedule, localDate)) {
      for (const hour of hours) {
        // A whole hour that is already over needs no look at its minutes.
        const lastOfHour = instantAtLocalTime(localDate, { hour, minute: minutes.at(-1) ?? 0 }, timeZone);
        if (lastOfHour.getTime() <= after.getTime()) continue;
        for (const minute of minutes) {
          const candidate = instantAtLocalTime(localDate, { hour, minute }, timeZone);
          if (candidate.getTime() > after.getTime()) return candidate;
        }
      }
    }
    localDate = addLocalDays(localDate, 1);
  }
  return undefined;
}

/** `minute hour day month weekday`, `*` for an omitted field (the original's `ToCronString`). */
export function toCronString(schedule: OriginalSchedule): string {
  return SCHEDULE_FIELDS.map((field) => schedule[field.name] ?? '*').join(' ');
}

/** "every minute", or the fields that are set, for timer descriptions. */
export function describeSchedule(schedule: OriginalSchedule): string {
  const set = SCHEDULE_FIELDS.filter((field) => schedule[field.name] !== undefined);
  if (set.length === 0) return `every minute (${scheduleTimeZone(schedule)})`;
  const parts = set.map((field) => `${field.name}=${schedule[field.name]}`);
  return `${parts.join(', ')} (${scheduleTimeZone(schedule)})`;
}
