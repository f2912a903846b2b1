/**
 * A stand-in for the engine in server tests: records every call and answers through the real messenger with a
 * canned reply, under the participant lock like the real flow. `failGreeting` / `failMessages` simulate a broken
 * engine.
 */
import type { ConversationFlow, IncomingMessage, TurnResult } from '../../src/engine/conversation-flow.ts';
import type { Messenger } from '../../src/engine/messenger.ts';
import type { ParticipantLock } from '../../src/store/participant-lock.ts';
import type { TranscriptRepository } from '../../src/store/store.ts';

export const GREETING_TEXT = 'Hi! I am your habit coach.';

export interface FakeConversationFlow extends ConversationFlow {
  readonly greeted: string[];
  readonly messages: IncomingMessage[];
  failGreeting: boolean;
  failMessages: boolean;
  /** Resolves each turn only when released (tests of ordering and shutdown); undefined = immediately. */
  gate: Promise<void> | undefined;
}

export function createFakeConversationFlow(options: {
  messenger: Messenger;
  lock: ParticipantLock;
  /** Where the participant's message is recorded, as the real engine does (poll answers depend on it). */
  transcript: TranscriptRepository;
}): FakeConversationFlow {
  const { messenger, lock, transcript } = options;
  const flow: FakeConversationFlow = {
    greeted: [],
    messages: [],
    failGreeting: false,
    failMessages: false,
    gate: undefined,
    greet(participantId) {
      return lock.run(participantId, async (): Promise<TurnResult> => {
        flow.greeted.push(participantId);
        if (flow.failGreeting) throw new Error('greeting exploded');
        await messenger.send(participantId, { type: 'text', text: GREETING_TEXT }, { kind: 'reply', module: 'INTAKE' });
        return { reply: GREETING_TEXT, module: 'INTAKE', toolsCalled: [] };
      });
    },
    continueConversation(participantId, turn) {
      return lock.run(participantId, async (): Promise<TurnResult> => {
        const reply = 'Continuing the conversation.';
        await messenger.send(
          participantId,
          { type: 'text', text: reply },
          { kind: 'reply', module: 'INTAKE', sourceMessageId: turn.sourceMessageId },
        );
        return { reply, module: 'INTAKE', toolsCalled: [] };
      });
    },
    handleMessage(message) {
      return lock.run(message.participantId, async (): Promise<TurnResult> => {
        // What the turn was asked, as data: `withReply` is left to the caller's own fallback (it marks processed).
        const { withReply: _withReply, ...asked } = message;
        flow.messages.push(asked);
        await transcript.append([
          {
            participantId: message.participantId,
            role: 'user',
            kind: 'message',
            content: message.text,
            createdAt: message.receivedAt,
            ...(message.sourceMessageId ? { sourceMessageId: message.sourceMessageId } : {}),
          },
        ]);
        await flow.gate;
        if (flow.failMessages) throw new Error('turn exploded');
        const reply = `You said: ${message.pollAnswer ? `${message.pollAnswer.option}` : message.text}`;
        await messenger.send(message.participantId, { type: 'text', text: reply }, { kind: 'reply', module: 'INTAKE' });
        return { reply, module: 'INTAKE', toolsCalled: [] };
      });
    },
  };
  return flow;
}
