/**
 * /stats against the hand-computed three-day study of `study-fixture.ts`:
 * - participants: Ada (active, FEEDBACK after her Done answer), Ben (active, INTAKE: never answered);
 * - 3 daily prompts (2026-03-03, 04, 05 UTC), each due at 09:00 − 10 min prep = 13:50 UTC;
 * - answered: day 1 (first message 14:10 → 20 min), day 2 (14:30 → 40 min); day 3 unanswered → median 30 min;
 * - Done: day 1 only → Done rate 1/3; one reminder (day 3);
 * - LLM calls: exactly the requests the scripted model server received, no errors; no failed deliveries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeStudyStats } from '../../src/research/stats/study-stats.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { generateStudy, type Study } from './study-fixture.ts';

let study: Study;
beforeAll(async () => {
  study = await generateStudy();
}, 60_000);
afterAll(async () => {
  await study?.close();
});

const stats = async (query = '') => {
  const response = await study.app.server.inject({ method: 'GET', url: `/stats${query}` });
  return { status: response.statusCode, body: response.json() };
};

describe('GET /stats', () => {
  it('gives the whole-study figures', async () => {
    const { status, body } = await stats();
    expect(status).toBe(200);
    const result = body.result;
    expect(result.participants).toEqual({
      total: 2,
      by_status: { active: 2 },
      by_sub_state: { FEEDBACK: 1, INTAKE: 1 },
      by_status_and_sub_state: { active: { FEEDBACK: 1, INTAKE: 1 } },
    });
    const calls = study.model.requests.length;
    expect(result.totals).toMatchObject({
      prompts_sent: 3,
      prompts_answered: 2,
      median_reply_latency_seconds: 30 * 60,
      done: 1,
      done_rate: 1 / 3,
      reminders_sent: 1,
      llm_calls: calls,
      llm_errors: 0,
      failed_deliveries: 0,
    });
    const stored = await study.app.store.research.llmCallsPage({}, undefined, 1000);
    expect(result.totals.llm_total_tokens).toBe(stored.reduce((sum, call) => sum + (call.totalTokens ?? 0), 0));
    expect(result.days.map((day: { date: string }) => day.date)).toEqual([
      '2026-03-02',
      '2026-03-03',
      '2026-03-04',
      '2026-03-05',
    ]);
    const [enrolment, day1, day2, day3] = result.days;
    expect(enrolment).toMatchObject({ prompts_sent: 0, done_rate: null, median_reply_latency_seconds: null });
    expect(enrolment.llm_calls).toBeGreaterThan(0);
    expect(day1).toMatchObject({
      prompts_sent: 1,
      prompts_answered: 1,
      done: 1,
      done_rate: 1,
      median_reply_latency_seconds: 1200,
      reminders_sent: 0,
    });
    expect(day2).toMatchObject({
      prompts_sent: 1,
      prompts_answered: 1,
      done: 0,
      done_rate: 0,
      median_reply_latency_seconds: 2400,
    });
    expect(day3).toMatchObject({
      prompts_sent: 1,
      prompts_answered: 0,
      reminders_sent: 1,
      median_reply_latency_seconds: null,
    });
    const perDayCalls = result.days.reduce((sum: number, day: { llm_calls: number }) => sum + day.llm_calls, 0);
    expect(perDayCalls).toBe(calls);
  });

  it('restricts to a range (to is inclusive for a date)', async () => {
    const { body } = await stats('?from=2026-03-04&to=2026-03-04');
    expect(body.result.from).toBe('2026-03-04T00:00:00.000Z');
    expect(body.result.to).toBe('2026-03-05T00:00:00.000Z');
    expect(body.result.totals).toMatchObject({ prompts_sent: 1, prompts_answered: 1, done: 0, reminders_sent: 0 });
    expect(body.result.days.map((day: { date: string }) => day.date)).toEqual(['2026-03-04']);
  });

  it('rejects bad ranges', async () => {
    expect((await stats('?from=soon')).status).toBe(400);
    expect((await stats('?from=2026-03-05&to=2026-03-01')).status).toBe(400);
  });
});

describe('study statistics: failures', () => {
  it('counts failed deliveries and LLM errors on the day they happened', async () => {
    const store = await createSqliteStore({ filename: ':memory:' });
    try {
      const at = new Date('2026-03-02T14:00:00.000Z');
      await store.jobs.enqueue({ id: 'job_x', kind: 'deliver_message', runAt: at, payload: {}, maxAttempts: 1 }, at);
      await store.jobs.enqueue({ id: 'job_y', kind: 'other', runAt: at, payload: {}, maxAttempts: 1 }, at);
      await store.jobs.claimDue({ now: at, owner: 'test', leaseMs: 60_000, limit: 10 });
      await store.jobs.fail('job_x', 'gateway down', at);
      await store.jobs.fail('job_y', 'not a delivery', at);
      await store.llmCalls.record({
        purpose: 'feedback',
        model: 'm',
        providerHost: 'h',
        latencyMs: 1,
        outcome: 'llm_error',
        error: 'down',
        createdAt: new Date('2026-03-03T10:00:00.000Z'),
      });
      const result = await computeStudyStats(store, { from: undefined, to: undefined });
      expect(result.totals).toMatchObject({ failed_deliveries: 1, llm_calls: 1, llm_errors: 1, prompts_sent: 0 });
      expect(result.days).toEqual([
        expect.objectContaining({ date: '2026-03-02', failed_deliveries: 1, llm_errors: 0 }),
        expect.objectContaining({ date: '2026-03-03', failed_deliveries: 0, llm_errors: 1 }),
      ]);
    } finally {
      await store.close();
    }
  });
});
