/**
 * The overview's figures for the last 14 days: the study days by the participants' own local dates (from the
 * study-day summary), LLM use and failed deliveries by UTC date, with zeros for the dates that had none.
 */
import type { ParticipantCounts, StudyDayFigures, UsageFigures } from '../store/dashboard-reads.ts';
import type { Store } from '../store/store.ts';

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

export function createOverviewData(store: Pick<Store, 'studyDays'>): (now: Date) => Promise<OverviewData> {
  return async (now) => {
    const today = now.toISOString().slice(0, 10);
    const usageDates = dateRange(today, OVERVIEW_DAYS);
    const [counts, days, usage] = await Promise.all([
      store.studyDays.participantCounts(),
      // A day ahead: east of UTC, a participant's local date is already tomorrow's.
      store.studyDays.figuresByDate(addDays(today, 1 - OVERVIEW_DAYS), addDays(today, 1)),
      store.studyDays.usageByUtcDate(
        new Date(`${usageDates[0] ?? today}T00:00:00Z`),
        new Date(`${addDays(today, 1)}T00:00:00Z`),
      ),
    ]);
    const byDate = new Map(days.map((day) => [day.localDate, day]));
    const last = byDate.has(addDays(today, 1)) ? addDays(today, 1) : today;
    const studyDays = dateRange(last, OVERVIEW_DAYS).map(
      (localDate) =>
        byDate.get(localDate) ?? { localDate, promptsSent: 0, promptsAnswered: 0, done: 0, medianReplySeconds: null },
    );
    const usageByDate = new Map(usage.map((day) => [day.date, day]));
    return {
      counts,
      studyDays,
      usage: usageDates.map(
        (date) => usageByDate.get(date) ?? { date, llmCalls: 0, llmErrors: 0, llmTokens: 0, failedDeliveries: 0 },
      ),
    };
  };
}
