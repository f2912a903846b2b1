/** The overview's 14 days: every date shown (zeros included), and closed UTC dates' usage read only once. */
import { describe, expect, it } from 'vitest';
import type { StudyDayRepository, UsageFigures } from '../../src/store/ports/roster-reads.ts';
import { createOverviewData } from '../../src/web/overview-data.ts';

function fakeStudyDays(usage: UsageFigures[]) {
  const reads: [string, string][] = [];
  const studyDays: StudyDayRepository = {
    figuresByDate: async () => [
      { localDate: '2026-03-17', promptsSent: 3, promptsAnswered: 2, done: 1, medianReplySeconds: 60 },
    ],
    participantCounts: async () => ({ byStatus: { active: 3 }, bySubState: { FEEDBACK: 3 } }),
    usageByUtcDate: async (from, to) => {
      reads.push([from.toISOString().slice(0, 10), to.toISOString().slice(0, 10)]);
      return usage.filter(
        (day) => day.date >= from.toISOString().slice(0, 10) && day.date < to.toISOString().slice(0, 10),
      );
    },
    adherencePage: async () => ({ rows: [], total: 0, next: undefined }),
  };
  return { store: { studyDays }, reads };
}

const day = (date: string, llmCalls: number): UsageFigures => ({
  date,
  llmCalls,
  llmErrors: 0,
  llmTokens: 10 * llmCalls,
  failedDeliveries: 0,
});

describe('overview data', () => {
  it('shows 14 dates ending today (a participant east of UTC may be on tomorrow), zeros where nothing happened', async () => {
    const { store } = fakeStudyDays([day('2026-03-10', 4)]);
    const data = await createOverviewData(store)(new Date('2026-03-16T20:00:00Z'));
    expect(data.usage.map((figures) => figures.date)).toEqual(
      Array.from({ length: 14 }, (_, index) => `2026-03-${String(index + 3).padStart(2, '0')}`),
    );
    expect(data.usage.find((figures) => figures.date === '2026-03-10')?.llmCalls).toBe(4);
    expect(data.usage.find((figures) => figures.date === '2026-03-11')?.llmCalls).toBe(0);
    // The local dates end at tomorrow, the latest date with study days.
    expect(data.studyDays.at(-1)).toMatchObject({ localDate: '2026-03-17', promptsSent: 3 });
    expect(data.studyDays[0]).toMatchObject({ localDate: '2026-03-04', promptsSent: 0 });
  });

  it('reads a closed UTC date once: later loads read only today, and the day after only yesterday and today', async () => {
    const usage = [day('2026-03-10', 4), day('2026-03-16', 1)];
    const { store, reads } = fakeStudyDays(usage);
    const overview = createOverviewData(store);
    await overview(new Date('2026-03-16T09:00:00Z'));
    usage.push(day('2026-03-16', 2));
    const later = await overview(new Date('2026-03-16T18:00:00Z'));
    const next = await overview(new Date('2026-03-17T08:00:00Z'));
    expect(reads).toEqual([
      ['2026-03-03', '2026-03-17'],
      ['2026-03-16', '2026-03-17'],
      ['2026-03-16', '2026-03-18'],
    ]);
    expect(later.usage.find((figures) => figures.date === '2026-03-10')?.llmCalls).toBe(4);
    expect(next.usage.find((figures) => figures.date === '2026-03-10')?.llmCalls).toBe(4);
    expect(next.usage.map((figures) => figures.date)[0]).toBe('2026-03-04');
  });
});
