/** Every benchmark, in the order the table lists them. Each runs once per store target. */
import { concurrentTurnBenchmark, sequentialTurnBenchmark } from './engine/engine-turn.ts';
import { jobRunnerDrainBenchmark } from './scheduling/job-runner-drain.ts';
import { flowStateWriteBenchmark } from './store/flow-state-write.ts';
import { jobClaimBenchmark } from './store/job-claim.ts';
import { jobEnqueueBenchmark } from './store/job-enqueue.ts';
import { transcriptAppendBenchmark } from './store/transcript-append.ts';
import { writeTransactionBenchmark } from './store/write-transaction.ts';
import type { Benchmark } from './support/benchmark.ts';

export const BENCHMARKS: readonly Benchmark[] = [
  writeTransactionBenchmark,
  transcriptAppendBenchmark,
  flowStateWriteBenchmark,
  jobEnqueueBenchmark,
  jobClaimBenchmark,
  sequentialTurnBenchmark,
  concurrentTurnBenchmark,
  jobRunnerDrainBenchmark,
];
