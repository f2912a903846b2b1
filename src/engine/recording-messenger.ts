/** A Messenger for tests: records every message instead of delivering it (sent within a transaction: on commit). */
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
    async send(participantId, message, options, within) {
      counter += 1;
      const record: SentMessage = { id: `out_${counter}`, participantId, message, options };
      // Like the outbox: a message sent within a transaction counts only once it commits.
      if (within) within.afterCommit(() => sent.push(record));
      else sent.push(record);
      return record;
    },
    textsFor(participantId) {
      return sent
        .filter((record) => record.participantId === participantId)
        .map((record) => (record.message.type === 'text' ? record.message.text : record.message.question));
    },
  };
}
