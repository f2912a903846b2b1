/**
 * The durable job runner draining a burst: 1,000 jobs due at the same instant (a study's daily prompts all set for
 * 09:00), run by `runDue` with the default batch size and the participant lock. The handler does nothing, so the
 * numbers are the runner's own cost per job: claim, lease, lock, completion.
 */

import { silentLog } from '../../src/domain/log.ts';
import { createManualClock } from '../../src/scheduling/clock.ts';
import { createJobRunner } from '../../src/scheduling/job-runner-service.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import type { Store } from '../../src/store/store.ts';
import type { Benchmark } from '../support/benchmark.ts';
import { BENCH_START, participantIdOf } from '../support/fixtures.ts';
import { measureSequential } from '../support/measure.ts';
import { withStore } from '../support/store-targets.ts';

/** Jobs due at once in one measured drain. */
export const BURST_SIZE = 1_000;
/** Jobs of the warm-up drain. */
const WARMUP_BURST_SIZE = 100;
/** The burst is spread over this many participants (10 jobs each), so the participant lock is exercised. */
const PARTICIPANT_COUNT = 100;
const JOB_KIND = 'bench_no_op';

/** Enqueues `count` jobs of {@link JOB_KIND} due at `runAt`, in one transaction; ids start at `firstNumber`. */
async function enqueueBurst(store: Store, count: number, firstNumber: number, runAt: Date): Promise<void> {
  await store.transaction(async (transaction) => {
    for (let offset = 0; offset < count; offset += 1) {
      const number = firstNumber + offset;
      await transaction.jobs.enqueue(
        {
          id: `job_burst_${number}`,
          kind: JOB_KIND,
          participantId: participantIdOf(number % PARTICIPANT_COUNT),
          runAt,
          payload: { number },
        },
        runAt,
      );
    }
  });
}

export const jobRunnerDrainBenchmark: Benchmark = {
  name: `job runner runDue, ${BURST_SIZE.toLocaleString('en-US')} jobs due at once`,
  run: ({ target, profile }) =>
    withStore(target, async (store) => {
      const clock = createManualClock(BENCH_START);
      const runner = createJobRunner({ store, clock, lock: createInProcessLock(), log: silentLog, owner: 'bench' });
      runner.register(JOB_KIND, async () => undefined);
      let enqueued = 0;

      /** Enqueues `count` jobs due now, then lets time pass a second so they are due. */
      const fillQueue = async (count: number) => {
        await enqueueBurst(store, count, enqueued, clock.now());
        enqueued += count;
        clock.advance(1000);
      };
      const drain = async (expected: number) => {
        const ran = await runner.runDue();
        if (ran !== expected) throw new Error(`runDue ran ${ran} jobs, expected ${expected}`);
      };

      await fillQueue(WARMUP_BURST_SIZE);
      await drain(WARMUP_BURST_SIZE);
      return measureSequential({
        profile,
        warmupIterations: 0,
        maxIterations: profile.drainRounds,
        itemsPerOperation: BURST_SIZE,
        itemUnit: 'jobs',
        prepare: () => fillQueue(BURST_SIZE),
        operation: () => drain(BURST_SIZE),
      });
    }),
};
