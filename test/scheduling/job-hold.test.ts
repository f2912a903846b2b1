/**
 * A handler that returns a `JobHold` (the delivery hold, while WhatsApp Web is not connected): the runner keeps the
 * same job waiting, attempts untouched, and a wake-up brings it forward; a simulated day of waiting is one row.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { wakeHeldDeliveries, withDeliveryHold } from '../../src/channels/whatsapp-web/delivery-hold.ts';
import { silentLog } from '../../src/domain/log.ts';
import { silentLog as silentAppLog } from '../../src/observability/log.ts';
import { createManualClock, type ManualClock } from '../../src/scheduling/clock.ts';
import type { JobRunReport } from '../../src/scheduling/job-execution.ts';
import { createJobRunner } from '../../src/scheduling/job-runner-service.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import type { Store } from '../../src/store/store.ts';
import { createMemoryStore, minutes } from './scheduling-fixtures.ts';

const T0 = new Date('2026-03-02T14:00:00.000Z');
let store: Store;
let clock: ManualClock;

beforeEach(async () => {
  store = await createMemoryStore();
  clock = createManualClock(T0);
});
afterEach(async () => {
  await store.close();
});

describe('held jobs in the runner', () => {
  it('holds the same job while its channel is away, then runs it once woken', async () => {
    const outcomes: JobRunReport['outcome'][] = [];
    const runner = createJobRunner({
      store,
      clock,
      lock: createInProcessLock(),
      log: silentLog,
      onJobRun: (_job, report) => outcomes.push(report.outcome),
    });
    let connected = false;
    const sent: string[] = [];
    runner.register(
      'deliver_message',
      withDeliveryHold({
        clock,
        log: silentAppLog,
        handler: async (job) => {
          sent.push(job.id);
        },
        holdBefore: () => (connected ? undefined : { deliveryHoldMs: minutes(30), wakeOn: 'whatsapp-web' }),
      }),
    );
    await store.jobs.enqueue(
      { id: 'job_greeting', kind: 'deliver_message', participantId: 'p_1', runAt: T0, payload: {}, maxAttempts: 8 },
      T0,
    );

    await runner.advanceTo(new Date(T0.getTime() + minutes(24 * 60)));

    expect(sent).toEqual([]);
    expect(outcomes).toHaveLength(49);
    expect(new Set(outcomes)).toEqual(new Set(['held']));
    const rows = await store.research.jobsPage({}, undefined, 1_000);
    expect(rows.map((job) => [job.id, job.status, job.attempts])).toEqual([['job_greeting', 'pending', 0]]);

    connected = true;
    let notified = 0;
    await wakeHeldDeliveries({ store, clock, log: silentAppLog, channel: 'whatsapp-web', notify: () => notified++ });
    expect(notified).toBe(1);
    expect(await runner.runDue()).toBe(1);
    expect(sent).toEqual(['job_greeting']);
    expect(await store.jobs.get('job_greeting')).toMatchObject({ status: 'completed', attempts: 1 });
  });

  it('still retries, spending an attempt, when the handler fails for another reason', async () => {
    const runner = createJobRunner({ store, clock, lock: createInProcessLock(), log: silentLog });
    runner.register(
      'deliver_message',
      withDeliveryHold({
        clock,
        log: silentAppLog,
        handler: async () => {
          throw new Error('gateway down');
        },
      }),
    );
    await store.jobs.enqueue({ id: 'job_1', kind: 'deliver_message', runAt: T0, payload: {} }, T0);
    await runner.runDue();
    expect(await store.jobs.get('job_1')).toMatchObject({ status: 'pending', attempts: 1, lastError: 'gateway down' });
  });
});
