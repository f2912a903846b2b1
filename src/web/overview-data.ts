/**
 * The overview's figures for the last 14 days: the study days by the participants' own local dates (from the
 * study-day summary), LLM use and failed deliveries by UTC date, with zeros for the dates that had none. A UTC date
 * before today no longer changes (calls and failures are stamped with the time they happen, and the study clock only
 * moves forward), so its usage is read once and kept: a load reads today's and any date not kept yet.
 */
import type {
  ParticipantCounts,
  RosterReadRepositories,
  StudyDayFigures,
  UsageFigures,
} from '../store/ports/roster-reads.ts';

export const OVERVIEW_DAYS = 14;

export interface OverviewData {
  counts: ParticipantCounts;
  /** The 14 local dates shown, oldest first, with zeros for dates without study days. */
  studyDays: StudyDayFigures[];
  /** The 14 UTC dates ending today, oldest first. */
  usage: UsageFigures[];
}

/** `date` (`YYYY-MM-DD`) moved by `days`. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

function dateRange(last: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => addDays(last, index - count + 1));
}

const noUsage = (date: string): UsageFigures => ({
  date,
  llmCalls: 0,
  llmErrors: 0,
  llmTokens: 0,
  failedDeliveries: 0,
});

export function createOverviewData(
  store: Pick<RosterReadRepositories, 'studyDays'>,
): (now: Date) => Promise<OverviewData> {
  /** The usage of closed UTC dates, by date; only the dates the overview can still show are kept. */
  let closed = new Map<string, UsageFigures>();

  async function usage(today: string): Promise<UsageFigures[]> {
    const dates = dateRange(today, OVERVIEW_DAYS);
    const from = dates.find((date) => !closed.has(date)) ?? today;
    const read = await store.studyDays.usageByUtcDate(
      new Date(`${from}T00:00:00Z`),
      new Date(`${addDays(today, 1)}T00:00:00Z`),
    );
    const byDate = new Map(read.map((figures) => [figures.date, figures]));
    const figures = dates.map(
      (date) => byDate.get(date) ?? (date < from ? closed.get(date) : undefined) ?? noUsage(date),
    );
    closed = new Map(figures.filter((day) => day.date < today).map((day) => [day.date, day]));
    return figures;
  }

  return async (now) => {
    const today = now.toISOString().slice(0, 10);
    const [counts, days, usageFigures] = await Promise.all([
      store.studyDays.participantCounts(),
      // A day ahead: east of UTC, a participant's local date is already tomorrow's.
      store.studyDays.figuresByDate(addDays(today, 1 - OVERVIEW_DAYS), addDays(today, 1)),
      usage(today),
    ]);
    const byDate = new Map(days.map((day) => [day.localDate, day]));
    const last = byDate.has(addDays(today, 1)) ? addDays(today, 1) : today;
    const studyDays = dateRange(last, OVERVIEW_DAYS).map(
      (localDate) =>
        byDate.get(localDate) ?? { localDate, promptsSent: 0, promptsAnswered: 0, done: 0, medianReplySeconds: null },
    );
    return { counts, studyDays, usage: usageFigures };
  };
}
