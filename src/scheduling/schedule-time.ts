/**
 * Wall-clock arithmetic for daily schedules, in IANA time zones (pure; Temporal does the calendar work).
 *
 * A daily schedule means "at 09:00 local time every day", so each occurrence is computed from a local calendar
 * date and a local time, never by adding 24 hours to the previous one (days are 23 or 25 hours long across a
 * daylight-saving change). Two local times need a rule:
 * - a time that does not exist (the spring-forward gap, 02:30 in Toronto on that Sunday) moves to the first valid
 *   minute after the gap (03:00), not to "the same offset later" (03:30) as Temporal's `compatible` would;
 * - a time that exists twice (the fall-back overlap, 01:30) takes the earlier instant.
 */
import { Temporal } from 'temporal-polyfill';
import type { LocalTime } from '../domain/local-time.ts';

/**
 * Results of the calendar computations below, by their arguments: they are pure (a process's time-zone rules do not
 * change while it runs), the same few zones, dates and times come back for every participant (a morning's prompts
 * all ask for today and tomorrow at a handful of times in a handful of zones), and each is costly in Temporal.
 */
const MEMO_CAPACITY = 2_000;

/** One memo of {@link MEMO_CAPACITY} results: `remember(parts, compute)` answers for the arguments in `parts`. */
function memo<R>(): (parts: readonly (string | number)[], compute: () => R) => R {
  const results = new Map<string, R>();
  return (parts, compute) => {
    // Parts are joined by NUL: a part that holds one is not remembered, so two different calls never share a key.
    if (parts.some((part) => typeof part === 'string' && part.includes('\0'))) return compute();
    const key = parts.join('\0');
    if (results.has(key)) return results.get(key) as R;
    const result = compute();
    // Cleared when full rather than kept in order: a day's keys are few, and a hit must stay one look-up.
    if (results.size >= MEMO_CAPACITY) results.clear();
    results.set(key, result);
    return result;
  };
}

const canonicalZones = memo<string | undefined>();
const datesPlusDays = memo<string>();
const dateComparisons = memo<number>();
const localInstants = memo<number>();

const LOCAL_DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
const MINUTES_PER_DAY = 24 * 60;

export function formatLocalTime(time: LocalTime): string {
  return `${String(time.hour).padStart(2, '0')}:${String(time.minute).padStart(2, '0')}`;
}

export function minutesOfDay(time: LocalTime): number {
  return time.hour * 60 + time.minute;
}

function fromMinutesOfDay(minutes: number): LocalTime {
  return { hour: Math.floor(minutes / 60), minute: minutes % 60 };
}

/**
 * The canonical spelling of an IANA time zone id (`america/toronto` → `America/Toronto`), or undefined when the
 * zone is unknown. Fixed offsets such as `+05:00` are refused: a schedule follows a place, with its DST rules.
 */
export function canonicalTimeZone(timeZone: string): string | undefined {
  return canonicalZones([timeZone], () => {
    const trimmed = timeZone.trim();
    if (trimmed === '' || /^[+-]/.test(trimmed)) return undefined;
    try {
      return Temporal.Instant.fromEpochMilliseconds(0).toZonedDateTimeISO(trimmed).timeZoneId;
    } catch {
      return undefined;
    }
  });
}

export function isValidTimeZone(timeZone: string): boolean {
  return canonicalTimeZone(timeZone) !== undefined;
}

function zoned(instant: Date, timeZone: string): Temporal.ZonedDateTime {
  return Temporal.Instant.fromEpochMilliseconds(instant.getTime()).toZonedDateTimeISO(timeZone);
}

/** The local calendar date (`YYYY-MM-DD`) of an instant in a zone. */
export function localDateOf(instant: Date, timeZone: string): string {
  return zoned(instant, timeZone).toPlainDate().toString();
}

/** `YYYY-MM-DD` plus `days` calendar days. */
export function addLocalDays(localDate: string, days: number): string {
  if (!LOCAL_DATE_PATTERN.test(localDate)) throw new RangeError(`not a local date: "${localDate}"`);
  return datesPlusDays([localDate, days], () => Temporal.PlainDate.from(localDate).add({ days }).toString());
}

/** Negative, zero or positive as `a` is before, the same as or after `b` (both `YYYY-MM-DD`). */
export function compareLocalDates(a: string, b: string): number {
  return dateComparisons([a, b], () =>
    Temporal.PlainDate.compare(Temporal.PlainDate.from(a), Temporal.PlainDate.from(b)),
  );
}

/**
 * The instant at which the wall clock of `timeZone` shows `time` on `localDate`. A time inside a spring-forward
 * gap yields the first valid minute after the gap; a time inside a fall-back overlap yields the earlier instant.
 */
export function instantAtLocalTime(localDate: string, time: LocalTime, timeZone: string): Date {
  const parts = [localDate, time.hour, time.minute, timeZone];
  return new Date(localInstants(parts, () => computeInstantAtLocalTime(localDate, time, timeZone).getTime()));
}

function computeInstantAtLocalTime(localDate: string, time: LocalTime, timeZone: string): Date {
  const wallClock = Temporal.PlainDate.from(localDate).toPlainDateTime({ hour: time.hour, minute: time.minute });
  // `earlier` resolves an overlap to its first instant; inside a gap it lands before the gap with the old offset.
  const earlier = wallClock.toZonedDateTime(timeZone, { disambiguation: 'earlier' });
  if (Temporal.PlainDateTime.compare(earlier.toPlainDateTime(), wallClock) === 0) {
    return new Date(earlier.epochMilliseconds);
  }
  // The wall-clock time does not exist: the transition that opened the gap is the first valid instant after it.
  const gapEnd = earlier.getTimeZoneTransition('next');
  if (!gapEnd) throw new RangeError(`no valid instant for ${wallClock.toString()} in ${timeZone}`);
  return new Date(gapEnd.epochMilliseconds);
}

/** The first instant strictly after `after` at which the wall clock of `timeZone` shows `time`. */
export function nextOccurrence(after: Date, time: LocalTime, timeZone: string): Date {
  let localDate = localDateOf(after, timeZone);
  // Two days always suffice; three guard against a zone skipping a whole calendar day (Samoa, 2011).
  for (let day = 0; day < 3; day += 1) {
    const candidate = instantAtLocalTime(localDate, time, timeZone);
    if (candidate.getTime() > after.getTime()) return candidate;
    localDate = addLocalDays(localDate, 1);
  }
  return instantAtLocalTime(localDate, time, timeZone);
}

/**
 * A uniformly random minute inside the window `[start, end]` (both inclusive; `start` must not be after `end`).
 * `random` returns a number in [0, 1), like `Math.random`; callers draw anew for each day.
 */
export function randomTimeInWindow(start: LocalTime, end: LocalTime, random: () => number): LocalTime {
  const first = minutesOfDay(start);
  const last = minutesOfDay(end);
  if (last < first)
    throw new RangeError(`window end ${formatLocalTime(end)} is before start ${formatLocalTime(start)}`);
  const span = last - first + 1;
  // Clamp in case an injected generator returns exactly 1.
  const offset = Math.min(span - 1, Math.floor(random() * span));
  return fromMinutesOfDay(Math.min(MINUTES_PER_DAY - 1, first + offset));
}

/** A human-readable local time with its zone, for tool results: `2025-03-10 08:50 (America/Toronto, UTC-04:00)`. */
export function formatLocalInstant(instant: Date, timeZone: string): string {
  const local = zoned(instant, timeZone);
  const time = formatLocalTime({ hour: local.hour, minute: local.minute });
  return `${local.toPlainDate().toString()} ${time} (${timeZone}, UTC${local.offset})`;
}
