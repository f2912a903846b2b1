/**
 * Messages a timer decided to send inside a transaction, sent only after that transaction commits.
 *
 * Why not send inside: the messenger writes its own transaction (transcript + outbox job). On SQLite there is one
 * connection, so a send from inside ours would wait for ours to finish: a deadlock. And holding a transaction
 * across a send would block every other writer anyway. Deciding (and clearing the pending state) in one
 * transaction is what makes a reply and a reminder mutually exclusive; sending after the commit makes a crash in
 * between lose a nudge rather than send it twice, which is the right side to err on for reminders.
 */
import type { Messenger, Outgoing, SendOptions } from '../../engine/messenger.ts';

export interface DeferredSend {
  participantId: string;
  message: Outgoing;
  options: SendOptions;
}

/** Sends in order; a failure stops the rest (the caller's job fails and its precondition check prevents repeats). */
export async function sendDeferred(messenger: Messenger, sends: readonly DeferredSend[]): Promise<void> {
  for (const send of sends) await messenger.send(send.participantId, send.message, send.options);
}
