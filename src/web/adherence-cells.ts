/**
 * What one cell of the adherence grid says: a participant's own local date, and what happened on it. Pure, so the
 * rules are tested without a page.
 * - done: the day's prompt was answered "Done"; answered: the participant wrote back, not "Done"; no answer: the
 *   prompt went unanswered (until the next one);
 * - paused: no prompt, and the participant was paused that day; not sent: no prompt otherwise (withdrawn, completed,
 *   a skipped day, or not yet today);
 * - blank: before their enrolment, or a date that has not begun where they live.
 */
import { ParticipantStatus } from '../domain/participant.ts';
import { localDateOf } from '../research/export/tables/daily-outcomes.ts';
import type { AdherenceRow } from '../store/ports/roster-reads.ts';

export type CellState = 'done' | 'answered' | 'no-answer' | 'paused' | 'not-sent' | 'blank';

export interface Cell {
  localDate: string;
  state: CellState;
  /** In words, for the cell's title: "Done", "not sent (withdrawn)", "no answer yet"… */
  description: string;
}

export const CELL_WORDS: Record<CellState, string> = {
  done: 'Done',
  answered: 'answered',
  'no-answer': 'no answer',
  paused: 'paused',
  'not-sent': 'not sent',
  blank: '',
};

/** The participant's local date at `at` (UTC when the zone is unknown or invalid). */
function localDate(at: Date, timezone: string): string {
  try {
    return localDateOf(at, timezone);
  } catch {
    return localDateOf(at, 'UTC');
  }
}

/** The cells of `row` for `dates` (local dates, oldest first) at the instant `now`. */
export function adherenceCells(row: AdherenceRow, dates: readonly string[], now: Date): Cell[] {
  const zone = row.participant.timezone;
  const today = localDate(now, zone);
  const enrolled = localDate(row.participant.enrolledAt, zone);
  const days = new Map(row.days.map((day) => [day.localDate, day]));
  const inactive = row.inactive.map((period) => ({
    status: period.status,
    from: localDate(period.from, zone),
    until: period.until ? localDate(period.until, zone) : undefined,
  }));
  return dates.map((date): Cell => {
    const day = days.get(date);
    if (day) {
      const state: CellState = day.done ? 'done' : day.answered ? 'answered' : 'no-answer';
      return {
        localDate: date,
        state,
        description: state === 'no-answer' && date === today ? 'no answer yet' : CELL_WORDS[state],
      };
    }
    if (date > today || date < enrolled) return { localDate: date, state: 'blank', description: '' };
    const period = inactive.find((span) => span.from <= date && (span.until === undefined || date <= span.until));
    if (period?.status === ParticipantStatus.PAUSED) return { localDate: date, state: 'paused', description: 'paused' };
    const why = period ? ` (${period.status})` : date === today ? ' yet' : '';
    return { localDate: date, state: 'not-sent', description: `not sent${why}` };
  });
}
