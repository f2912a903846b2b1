/**
 * The `held_coach_turn` job on its own (the whole path runs against the server in
 * test/e2e/held-coach-turn-process.test.ts): ending the review enqueues it once, in the same transaction; a retry after
 * the reply was sent runs no second turn; a conversation taken over meanwhile, or a withdrawn participant, gets none.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLog } from '../../src/observability/log.ts';
import { createAlertService } from '../../src/safety/alert-service.ts';
import { createHeldTurnHandler, HELD_TURN_HINT, HELD_TURN_JOB } from '../../src/safety/held-coach-turn.ts';
import { createManualClock } from '../../src/scheduling/clock.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Job, Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const NOW = new Date('2026-03-02T14:00:00.000Z');
let store: Store;
const clock = createManualClock(NOW);
let ids = 0;
const newId = (prefix: string) => `${prefix}_${++ids}`;
const turns: { participantId: string; hint: string; sourceMessageId: string }[] = [];
const flow = {
  async continueConversation(participantId: string, turn: { hint: string; sourceMessageId: string }) {
    turns.push({ participantId, ...turn });
    return { reply: 'ok', module: 'INTAKE' as const, toolsCalled: [] };
  },
};

beforeEach(async () => {
  store = await createSqliteStore({ filename: ':memory:' });
  turns.length = 0;
  await store.participants.create(participantFixture('p_1', '+15550001111', NOW));
});
afterEach(() => store.close());

async function flagAndHold(alerts: ReturnType<typeof createAlertService>): Promise<string> {
  return store.transaction(async (tx) => {
    const id = await alerts.raise({
      participantId: 'p_1',
      kind: 'risk',
      detector: 'keywords',
      rule: 'kill myself',
      score: undefined,
      urgency: 'urgent',
      reason: 'test',
      sourceMessageId: 'in_1',
      review: true,
    });
    await tx.alerts.holdTurn('p_1', 'in_1');
    return id;
  });
}

const heldJobs = async (): Promise<Job[]> => store.jobs.listPending({ participantId: 'p_1', kind: HELD_TURN_JOB });

describe('the held coach turn', () => {
  it('is released once by the end of the review, and not run again after its reply', async () => {
    const alerts = createAlertService({ store, clock, newId, routes: [] });
    const first = await flagAndHold(alerts);
    const other = await store.transaction(() =>
      alerts.raise({
        participantId: 'p_1',
        kind: 'adherence',
        detector: 'adherence',
        rule: 'r',
        score: undefined,
        urgency: 'normal',
        reason: 'test',
        sourceMessageId: undefined,
        review: false,
      }),
    );
    // A takeover notification left unread does not hold the review up; the adherence alert does.
    await store.transaction(() =>
      alerts.raise({
        participantId: 'p_1',
        kind: 'takeover-message',
        detector: 'takeover',
        rule: 'for ada',
        score: undefined,
        urgency: 'normal',
        reason: 'test',
        sourceMessageId: undefined,
        review: false,
        dashboardOnly: true,
      }),
    );
    await alerts.resolve(first, 'ada', 'spoke with them');
    expect(await heldJobs()).toEqual([]); // another alert is unresolved: still under review, still held
    expect(await store.alerts.heldTurn('p_1')).toBe('in_1');
    await alerts.resolve(other, 'ada', 'texted them');
    const [job, ...more] = await heldJobs();
    expect(more).toEqual([]);
    expect(job?.payload).toEqual({ sourceMessageId: 'in_1' });
    expect(await store.alerts.heldTurn('p_1')).toBeUndefined();

    const handler = createHeldTurnHandler({ store, clock, log: silentLog, flow, answerWhilePaused: true });
    await handler(job as Job);
    expect(turns).toEqual([{ participantId: 'p_1', hint: HELD_TURN_HINT, sourceMessageId: 'in_1' }]);
    // The job retried after its reply committed (a crash before the job's completion): no second turn.
    await store.transcript.append([
      {
        participantId: 'p_1',
        role: 'assistant',
        kind: 'reply',
        content: 'ok',
        createdAt: NOW,
        sourceMessageId: 'in_1',
      },
    ]);
    await handler(job as Job);
    expect(turns).toHaveLength(1);
  });

  it('is discarded on request, and dropped for a taken-over conversation or a withdrawn participant', async () => {
    const alerts = createAlertService({ store, clock, newId, routes: [] });
    await alerts.resolve(await flagAndHold(alerts), 'ada', 'called them', { heldTurn: 'discard' });
    expect(await heldJobs()).toEqual([]);
    expect(await store.alerts.heldTurn('p_1')).toBeUndefined();
    const resolved = await store.events.list({ participantId: 'p_1', type: 'alert-resolved' });
    expect(resolved.map((event) => event.data['held_turn'])).toEqual(['discarded']);

    const handler = createHeldTurnHandler({ store, clock, log: silentLog, flow, answerWhilePaused: true });
    const job = { participantId: 'p_1', payload: { sourceMessageId: 'in_1' } } as unknown as Job;
    await store.takeovers.begin({
      participantId: 'p_1',
      takenBy: 'sam',
      startedAt: NOW,
      timers: 'keep',
      lastStaffMessageAt: NOW,
    });
    await handler(job);
    await store.takeovers.end('p_1');
    await store.participants.update('p_1', { status: 'withdrawn', updatedAt: NOW });
    await handler(job);
    expect(turns).toEqual([]);
    const dropped = await store.events.list({ participantId: 'p_1', type: 'held-turn-dropped' });
    expect(dropped.map((event) => event.data['reason'])).toEqual(['taken-over', 'participant is withdrawn']);
  });
});
