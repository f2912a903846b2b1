/**
 * When a decision point's moments fall, what a participant's arm gives each option, and the draw — pure functions of
 * the design, so the decisions are recomputable like the allocations. A moment is (local date, slot): slot n is the
 * n-th of the point's `times` (sorted), delayed by a jitter drawn from the seed within `jitter_minutes`; a point at
 * the daily prompt time has one slot, the day's daily prompt target time.
 */
import { parseLocalTime } from '../domain/local-time.ts';
import { addLocalDays, instantAtLocalTime, localDateOf } from '../scheduling/schedule-time.ts';
import { keyedUniform, weightedChoice } from './keyed-random.ts';
import type { DecisionPoint, StudyDesign } from './study-design.ts';

export interface Moment {
  localDate: string;
  slot: number;
  intendedAt: Date;
  /** `YYYY-MM-DD HH:MM`, the participant's wall clock. */
  intendedLocal: string;
  /** Minutes after local midnight (quiet hours are checked on it). */
  minuteOfDay: number;
}

function sortedTimes(point: DecisionPoint): string[] {
  return point.moment.type === 'local_times' ? [...point.moment.times].sort() : [];
}

/** The moment of `slot` on `localDate` for this participant (the jitter is theirs: keyed by their id). */
export function momentOf(
  design: StudyDesign,
  point: DecisionPoint,
  participantId: string,
  timeZone: string,
  localDate: string,
  slot: number,
): Moment | undefined {
  const time = parseLocalTime(sortedTimes(point)[slot] ?? '');
  if (!time || point.moment.type !== 'local_times') return undefined;
  const jitter = Math.floor(
    keyedUniform(design.study.seed, {
      studyId: design.study.id,
      stratum: participantId,
      index: `${localDate}#${slot}`,
      purpose: `jitter:${point.id}`,
      counter: 0,
    }) *
      (point.moment.jitter_minutes + 1),
  );
  const minuteOfDay = time.hour * 60 + time.minute + jitter;
  const intendedAt = new Date(instantAtLocalTime(localDate, time, timeZone).getTime() + jitter * 60_000);
  const hours = String(Math.floor(minuteOfDay / 60) % 24).padStart(2, '0');
  const minutes = String(minuteOfDay % 60).padStart(2, '0');
  return { localDate, slot, intendedAt, intendedLocal: `${localDate} ${hours}:${minutes}`, minuteOfDay };
}

/** The first moment strictly after `after`. */
export function nextMoment(
  design: StudyDesign,
  point: DecisionPoint,
  participantId: string,
  timeZone: string,
  after: Date,
): Moment | undefined {
  const slots = sortedTimes(point).length;
  const firstDate = addLocalDays(localDateOf(after, timeZone), -1);
  for (let day = 0; day < 4; day += 1) {
    const localDate = addLocalDays(firstDate, day);
    for (let slot = 0; slot < slots; slot += 1) {
      const moment = momentOf(design, point, participantId, timeZone, localDate, slot);
      if (moment && moment.intendedAt > after) return moment;
    }
  }
  return undefined;
}

/** The arm's probabilities, else the point's default. */
export function probabilitiesFor(point: DecisionPoint, armId: string): Record<string, number> {
  return point.probabilities.by_arm[armId] ?? point.probabilities.default;
}

export function drawOption(
  design: StudyDesign,
  point: DecisionPoint,
  participantId: string,
  moment: Pick<Moment, 'localDate' | 'slot'>,
  probabilities: Record<string, number>,
): { option: string; draw: number } {
  const draw = keyedUniform(design.study.seed, {
    studyId: design.study.id,
    stratum: participantId,
    index: `${moment.localDate}#${moment.slot}`,
    purpose: `decision:${point.id}`,
    counter: 0,
  });
  const option = weightedChoice(
    point.options.map((id) => ({ option: id, weight: probabilities[id] ?? 0 })),
    draw,
  );
  return { option, draw };
}

/** Whether `minuteOfDay` falls in the quiet hours (which may wrap midnight: 22:00–07:00). */
export function inQuietHours(minuteOfDay: number, quiet: { start: string; end: string }): boolean {
  const start = parseLocalTime(quiet.start);
  const end = parseLocalTime(quiet.end);
  if (!start || !end) return false;
  const from = start.hour * 60 + start.minute;
  const to = end.hour * 60 + end.minute;
  const minute = minuteOfDay % 1440;
  return from <= to ? minute >= from && minute < to : minute >= from || minute < to;
}

/** The moment of a `daily_prompt` decision point: the day's daily prompt target time (slot 0, no jitter). */
export function dailyPromptMoment(localDate: string, targetAt: Date, timeZone: string): Moment {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(targetAt);
  const hours = parts.find((part) => part.type === 'hour')?.value ?? '00';
  const minutes = parts.find((part) => part.type === 'minute')?.value ?? '00';
  return {
    localDate,
    slot: 0,
    intendedAt: targetAt,
    intendedLocal: `${localDate} ${hours}:${minutes}`,
    minuteOfDay: Number(hours) * 60 + Number(minutes),
  };
}
