/**
 * `jobs.enqueue` with a dedup key that already holds a pending job: the replace (cancel the old reminder, insert the
 * new one) that every reply and every rescheduled timer performs.
 */
import type { Benchmark } from '../support/benchmark.ts';
import { BENCH_START, participantIdOf } from '../support/fixtures.ts';
import { measureSequential } from '../support/measure.ts';
import { withStore } from '../support/store-targets.ts';

/** Keys rotate over this many participants; the warm-up fills every key, so each measured enqueue replaces one. */
const PARTICIPANT_COUNT = 100;

export const jobEnqueueBenchmark: Benchmark = {
  name: 'jobs enqueue, replacing a pending dedup key',
  run: ({ target, profile }) =>
    withStore(target, (store) =>
      measureSequential({
        profile,
        warmupIterations: Math.max(profile.warmupIterations, PARTICIPANT_COUNT),
        itemUnit: 'enqueues',
        operation: async (index) => {
          const participantId = participantIdOf(index % PARTICIPANT_COUNT);
          const now = new Date(BENCH_START.getTime() + index * 1000);
          await store.jobs.enqueue(
            {
              id: `job_enqueue_${index}`,
              kind: 'daily_prompt_reminder',
              participantId,
              runAt: new Date(now.getTime() + 3_600_000),
              payload: { participantId, promptSentAt: now.toISOString() },
              dedupKey: `daily_prompt_reminder:${participantId}`,
            },
            now,
          );
        },
      }),
    ),
};
