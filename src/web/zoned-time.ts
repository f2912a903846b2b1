/**
 * Times as the study staff and the participant read them: in the participant's time zone, with the zone named once
 * near the times rather than on each of them. Intl does the zone work (the same IANA rules Temporal uses).
 */
import type { Participant } from '../domain/participant.ts';
import { canonicalTimeZone } from '../scheduling/schedule-time.ts';

/** Shown when neither the participant nor their schedule names a zone; also the machine's data are UTC. */
export const FALLBACK_TIME_ZONE = 'UTC';

/**
 * The zone a participant's times are shown in: their own (`participant.timezone`), else the zone of their daily
 * schedule (the coach's default when they had none, so that is the zone their prompts are computed in), else UTC.
 * A stored zone the runtime does not know falls through to the next.
 */
export function participantTimeZone(
  participant: Pick<Participant, 'timezone'>,
  schedules: readonly { timezone: string }[] = [],
): string {
  for (const candidate of [participant.timezone, ...schedules.map((schedule) => schedule.timezone)]) {
    const zone = candidate ? canonicalTimeZone(candidate) : undefined;
    if (zone) return zone;
  }
  return FALLBACK_TIME_ZONE;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function format(timeZone: string, withYear: boolean): Intl.DateTimeFormat {
  const key = `${timeZone}|${withYear}`;
  let formatter = formats.get(key);
  if (!formatter) {
    // en-GB: "Tue 3 Mar, 08:50", a 24-hour clock and the day before the month, which no reader misreads.
    formatter = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      weekday: 'short',
      day: 'numeric',
      month: 'short',
      ...(withYear ? { year: 'numeric' } : {}),
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formats.set(key, formatter);
  }
  return formatter;
}

/**
 * `Tue 3 Mar, 08:50` in `timeZone`; with the year (`Tue, 3 Mar 2026, 08:50`) when it is not the year of `now` there,
 * so a study that runs across New Year never shows an ambiguous date.
 */
export function zonedTime(instant: Date, timeZone: string, now?: Date): string {
  const year = (date: Date) =>
    format(timeZone, true)
      .formatToParts(date)
      .find((part) => part.type === 'year')?.value;
  const withYear = now !== undefined && year(instant) !== year(now);
  return format(timeZone, withYear).format(instant);
}
