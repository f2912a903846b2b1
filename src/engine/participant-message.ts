/**
 * Steps 1 and 2 of a turn (conversation-flow-service.ts): recording the participant's message (transcript, poll
 * effects, the scheduling hooks, the working history: one transaction, so a reply and the cancellation of its
 * reminder commit together), resuming a turn whose message was already recorded, and routing by `conversationState`.
 */

import type { Clock } from '../domain/clock.ts';
import { ConversationState, isConversationState } from '../domain/conversation-state.ts';
import { DataKey } from '../domain/data-keys.ts';
import type { ConversationMessage } from '../domain/history.ts';
import type { Log } from '../domain/log.ts';
import { readData, readProfile, writeData, writeProfile } from '../domain/participant-data.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { Store } from '../store/store.ts';
import type { IncomingMessage } from './conversation-flow.ts';
import { appendToHistory, readHistory } from './conversation-history.ts';
import { applyPollAnswer } from './poll-effects.ts';
import type { TurnHooks } from './turn-hooks.ts';

/** Where a turn starts: the working history before this turn's message, and the module to run. */
export interface TurnStart {
  history: ConversationMessage[];
  module: ConversationState;
}

export interface ParticipantMessages {
  /**
   * Step 2: the sub-state, persisting INTAKE when it is empty or unknown. Reads and writes through the store the
   * messages were made with, so it joins the caller's unit of work.
   */
  route(participantId: string, now: Date): Promise<ConversationState>;
  /** Step 1 for a real message. */
  record(message: IncomingMessage, userText: string): Promise<TurnStart>;
  /** Step 1 for a message an interrupted turn already recorded; undefined when it was not. */
  resume(message: IncomingMessage, userText: string): Promise<TurnStart | undefined>;
}

export function createParticipantMessages(dependencies: {
  store: Store;
  clock: Clock;
  log: Log;
  hooks?: TurnHooks;
  messages: MessageCatalogue;
}): ParticipantMessages {
  const { store, clock, log, messages } = dependencies;

  /** Step 2: the sub-state, persisting INTAKE when it is empty or unknown. */
  async function route(participantId: string, now: Date): Promise<ConversationState> {
    const data = await readData(store, participantId);
    const stored = data[DataKey.conversationState];
    if (isConversationState(stored)) return stored;
    await writeData(store, participantId, { [DataKey.conversationState]: ConversationState.INTAKE }, now);
    await store.events.record({
      participantId,
      type: 'state-changed',
      data: { from: stored ?? '', to: ConversationState.INTAKE, source: 'routing-default' },
      createdAt: now,
    });
    return ConversationState.INTAKE;
  }

  /** Step 1 for a real message: transcript, poll effects, hooks, working history — one transaction. */
  async function recordParticipantMessage(message: IncomingMessage, userText: string): Promise<TurnStart> {
    const now = clock.now();
    return store.transaction(async () => {
      const history = await readHistory(store, message.participantId);
      await store.transcript.append([
        {
          participantId: message.participantId,
          role: 'user',
          kind: 'message',
          content: userText,
          createdAt: message.receivedAt,
          ...(message.sourceMessageId ? { sourceMessageId: message.sourceMessageId } : {}),
        },
      ]);
      if (message.pollAnswer) {
        const profile = await readProfile(store, message.participantId, now);
        const effect = applyPollAnswer(profile, message.pollAnswer, messages);
        if (effect.kind !== 'none') {
          profile.updated_at = now.toISOString();
          await writeProfile(store, message.participantId, profile, now);
          await store.events.record({
            participantId: message.participantId,
            type: 'poll-answered',
            data: { ...effect, question: message.pollAnswer.question ?? null, option: message.pollAnswer.option },
            createdAt: now,
            ...(message.sourceMessageId ? { sourceMessageId: message.sourceMessageId } : {}),
          });
        }
      }
      await dependencies.hooks?.onParticipantMessage?.({
        participantId: message.participantId,
        at: message.receivedAt,
        sourceMessageId: message.sourceMessageId,
      });
      await appendToHistory(store, message.participantId, [
        { role: 'user', content: userText, timestamp: message.receivedAt.toISOString() },
      ]);
      const module = await route(message.participantId, now);
      return { history, module };
    });
  }

  /**
   * A turn interrupted after step 1 committed (the instance died during the LLM call) is run again by another
   * instance: the message is already in the transcript, its poll effects applied, its hooks run. Recording it again
   * would count a "Done" twice; instead the turn resumes from the recorded history.
   */
  async function resumeRecordedMessage(message: IncomingMessage, userText: string): Promise<TurnStart | undefined> {
    if (!message.sourceMessageId) return undefined;
    const recorded =
      message.recorded ??
      (await store.transcript.forSourceMessage(message.participantId, message.sourceMessageId)).some(
        (entry) => entry.role === 'user',
      );
    if (!recorded) return undefined;
    log.warn(
      { participantId: message.participantId, sourceMessageId: message.sourceMessageId },
      'resuming a turn whose message was already recorded',
    );
    const now = clock.now();
    return store.transaction(async () => {
      const history = await readHistory(store, message.participantId);
      const last = history.at(-1);
      const before = last?.role === 'user' && last.content === userText ? history.slice(0, -1) : history;
      return { history: before, module: await route(message.participantId, now) };
    });
  }

  return { route, record: recordParticipantMessage, resume: resumeRecordedMessage };
}
