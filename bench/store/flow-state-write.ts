/**
 * The flow-state read-modify-write (`writeData`) inside a transaction, as the conversation flow does it several times
 * per turn: read the row (state data with a partly filled profile; the working history has its own table since
 * migration 016), merge one key, write it back.
 */
import { DataKey } from '../../src/domain/data-keys.ts';
import { writeData } from '../../src/domain/participant-data.ts';
import type { Benchmark } from '../support/benchmark.ts';
import { BENCH_START, enrollParticipants } from '../support/fixtures.ts';
import { measureSequential } from '../support/measure.ts';
import { withStore } from '../support/store-targets.ts';

const PARTICIPANT_COUNT = 20;

export const flowStateWriteBenchmark: Benchmark = {
  name: 'flow state read-modify-write (writeData in a transaction)',
  run: ({ target, profile }) =>
    withStore(target, async (store) => {
      const participants = await enrollParticipants(store, PARTICIPANT_COUNT);
      return measureSequential({
        profile,
        itemUnit: 'writes',
        operation: async (index) => {
          const participant = participants[index % participants.length]!;
          const now = new Date(BENCH_START.getTime() + index * 1000);
          await store.transaction((transaction) =>
            writeData(transaction, participant.id, { [DataKey.lastPromptSentAt]: now.toISOString() }, now),
          );
        },
      });
    }),
};
