/**
 * `jobs.claimDue` of a batch of 10 due jobs followed by `jobs.complete` of each: the store's share of the job
 * runner's work. The backlog is refilled (untimed) whenever fewer than a batch of jobs remain.
 */
import type { Store } from '../../src/store/store.ts';
import type { Benchmark } from '../support/benchmark.ts';
import { BENCH_START, participantIdOf } from '../support/fixtures.ts';
import { measureSequential } from '../support/measure.ts';
import { withStore } from '../support/store-targets.ts';

/** The job runner's default batch size. */
const BATCH_SIZE = 10;
const BACKLOG_SIZE = 500;
const LEASE_MS = 600_000;

/** Enqueues `count` jobs due at `BENCH_START`, in one transaction. */
async function enqueueDueJobs(store: Store, count: number, firstNumber: number): Promise<void> {
  await store.transaction(async (transaction) => {
    for (let offset = 0; offset < count; offset += 1) {
      const number = firstNumber + offset;
      await transaction.jobs.enqueue(
        {
          id: `job_claim_${number}`,
          kind: 'deliver_message',
          participantId: participantIdOf(number % 100),
          runAt: BENCH_START,
          payload: { number },
        },
        BENCH_START,
      );
    }
  });
}

export const jobClaimBenchmark: Benchmark = {
  name: `jobs claimDue(${BATCH_SIZE}) + complete each`,
  run: ({ target, profile }) =>
    withStore(target, async (store) => {
      let enqueued = 0;
      let claimed = 0;
      const now = new Date(BENCH_START.getTime() + 1000);
      return measureSequential({
        profile,
        itemsPerOperation: BATCH_SIZE,
        itemUnit: 'jobs',
        prepare: async () => {
          if (enqueued - claimed >= BATCH_SIZE) return;
          await enqueueDueJobs(store, BACKLOG_SIZE, enqueued);
          enqueued += BACKLOG_SIZE;
        },
        operation: async () => {
          const jobs = await store.jobs.claimDue({ now, owner: 'bench', leaseMs: LEASE_MS, limit: BATCH_SIZE });
          if (jobs.length !== BATCH_SIZE)
            throw new Error(`claimDue returned ${jobs.length} jobs, expected ${BATCH_SIZE}`);
          claimed += jobs.length;
          for (const job of jobs) await store.jobs.complete(job.id, now);
        },
      });
    }),
};
