/**
 * The smallest write transaction through the store: one event recorded in `store.transaction`. What every
 * transaction of a turn costs before its own statements and pages: on SQLite the lock, the commit's WAL frames and
 * their system calls; on PostgreSQL the round trips of `begin` and `commit`.
 */
import type { Benchmark } from '../support/benchmark.ts';
import { BENCH_START, enrollParticipants } from '../support/fixtures.ts';
import { measureSequential } from '../support/measure.ts';
import { withStore } from '../support/store-targets.ts';

export const writeTransactionBenchmark: Benchmark = {
  name: 'smallest write transaction (one event)',
  run: ({ target, profile }) =>
    withStore(target, async (store) => {
      const [participant] = await enrollParticipants(store, 1);
      if (!participant) throw new Error('no participant was enrolled');
      return measureSequential({
        profile,
        itemUnit: 'transactions',
        operation: async (index) => {
          const createdAt = new Date(BENCH_START.getTime() + index * 1000);
          await store.transaction((transaction) =>
            transaction.events.record({ participantId: participant.id, type: 'bench', data: {}, createdAt }),
          );
        },
      });
    }),
};
