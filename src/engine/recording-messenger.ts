/** A Messenger for tests: records every message instead of delivering it (sent in a unit of work: on its commit). */
import { afterCurrentCommit } from '../store/unit-of-work.ts';
import type { Messenger, SentMessage } from './messenger.ts';

export interface RecordingMessenger extends Messenger {
  readonly sent: SentMessage[];
  /** The texts (and poll questions) sent to one participant, in order. */
  textsFor(participantId: string): string[];
}

export function createRecordingMessenger(): RecordingMessenger {
  const sent: SentMessage[] = [];
  let counter = 0;
  return {
    sent,
    async send(participantId, message, options) {
      counter += 1;
      const record: SentMessage = { id: `out_${counter}`, participantId, message, options };
      // Like the outbox: a message sent in a unit of work counts only once it commits.
      afterCurrentCommit(() => sent.push(record));
      return record;
    },
    textsFor(participantId) {
      return sent
        .filter((record) => record.participantId === participantId)
        .map((record) => (record.message.type === 'text' ? record.message.text : record.message.question));
    },
  };
}
