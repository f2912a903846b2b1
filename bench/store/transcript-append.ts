/** `transcript.append` of one participant message: the write every inbound message and reply makes. */
import type { Benchmark } from '../support/benchmark.ts';
import { BENCH_START, participantIdOf } from '../support/fixtures.ts';
import { measureSequential } from '../support/measure.ts';
import { withStore } from '../support/store-targets.ts';

/** Appends rotate over this many participants, as a live study interleaves them. */
const PARTICIPANT_COUNT = 20;

const MESSAGE_TEXT =
  'I managed the walk after lunch today, about ten minutes. Tomorrow I have a double shift so it might be harder.';

export const transcriptAppendBenchmark: Benchmark = {
  name: 'transcript append (1 entry)',
  run: ({ target, profile }) =>
    withStore(target, (store) =>
      measureSequential({
        profile,
        itemUnit: 'appends',
        operation: async (index) => {
          await store.transcript.append([
            {
              participantId: participantIdOf(index % PARTICIPANT_COUNT),
              role: 'user',
              kind: 'message',
              content: MESSAGE_TEXT,
              sourceMessageId: `in_${index}`,
              createdAt: new Date(BENCH_START.getTime() + index * 1000),
            },
          ]);
        },
      }),
    ),
};
