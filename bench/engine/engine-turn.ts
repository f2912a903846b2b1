/**
 * A full conversation turn, `flow.handleMessage`: participant lock, transcript + working history + routing in one
 * transaction, context builder and request guard, the tool loop (one `save_user_profile` call, then the reply), the
 * tool's profile write, events, the reply through the outbox and the history append. Participants start with a full
 * 50-message working history, so every request carries production-sized context.
 */
import type { Benchmark, BenchmarkContext, Measurement } from '../support/benchmark.ts';
import { enrollParticipants } from '../support/fixtures.ts';
import { measureConcurrent, measureSequential } from '../support/measure.ts';
import { withStore } from '../support/store-targets.ts';
import { type BenchEngine, createBenchEngine } from './engine-wiring.ts';

/** How many participants talk at once in the concurrent benchmark. */
export const CONCURRENT_PARTICIPANTS = 50;

/** One turn of `participantId`; its message number is `index`. */
async function takeTurn(engine: BenchEngine, participantId: string, index: number): Promise<void> {
  const result = await engine.flow.handleMessage({
    participantId,
    text: `Message ${index}: I walked for ten minutes after lunch, but skipped yesterday because of a late shift.`,
    sourceMessageId: `in_${participantId}_${index}`,
    receivedAt: engine.clock.now(),
  });
  if (result.toolsCalled.length !== 1) {
    throw new Error(`a benchmark turn called ${result.toolsCalled.length} tools instead of 1: ${result.reply}`);
  }
}

export const sequentialTurnBenchmark: Benchmark = {
  name: 'engine turn (tool call + reply), 1 participant',
  run: ({ target, profile }: BenchmarkContext): Promise<Measurement> =>
    withStore(target, async (store) => {
      const [participant] = await enrollParticipants(store, 1);
      const engine = createBenchEngine(store);
      return measureSequential({
        profile,
        itemUnit: 'turns',
        operation: (index) => takeTurn(engine, participant!.id, index),
      });
    }),
};

export const concurrentTurnBenchmark: Benchmark = {
  name: `engine turn (tool call + reply), ${CONCURRENT_PARTICIPANTS} participants concurrently`,
  run: ({ target, profile }: BenchmarkContext): Promise<Measurement> =>
    withStore(target, async (store) => {
      const participants = await enrollParticipants(store, CONCURRENT_PARTICIPANTS);
      const engine = createBenchEngine(store);
      return measureConcurrent({
        profile,
        workers: CONCURRENT_PARTICIPANTS,
        warmupIterations: Math.max(profile.warmupIterations, 2 * CONCURRENT_PARTICIPANTS),
        itemUnit: 'turns',
        operation: (worker, index) => takeTurn(engine, participants[worker]!.id, index),
      });
    }),
};
