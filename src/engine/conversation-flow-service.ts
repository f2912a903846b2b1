/**
 * `ConversationFlow.processResponse` (specification §The turn) as small steps:
 * 1. record the participant's message (transcript + working history), apply poll effects and let the scheduling
 *    hooks react — one transaction, so a reply and the cancellation of its reminder commit together;
 * 2. route by `conversationState` (empty or unknown → INTAKE, persisted);
 * 3. run the module's tool loop (no transaction held: LLM calls are slow);
 * 4. send the reply and append it to the working history, in one transaction (when that fails, the failure is logged
 *    and the reply still goes, alone);
 * 5. after a FEEDBACK turn, cancel pending feedback timers; in debug mode, send `🐛 DEBUG:` messages.
 * Steps 1 and 2 are participant-message.ts, steps 3 to 5 turn-runner.ts; this file takes the participant's lock
 * around each turn and composes them.
 */

import type { Clock } from '../domain/clock.ts';
import type { ConversationState } from '../domain/conversation-state.ts';
import { AppError } from '../domain/errors.ts';
import type { Log } from '../domain/log.ts';
import type { Participant } from '../domain/participant.ts';
import { formatPollAnswer } from '../domain/polls.ts';
import { createBuiltInMessageCatalogue } from '../i18n/built-in-catalogues.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { LlmClient } from '../llm/llm.ts';
import type { ToolProtocol } from '../llm/text-tool-protocol.ts';
import type { ParticipantLock } from '../store/participant-lock.ts';
import type { Store } from '../store/store.ts';
import type { ConversationFlow, TurnResult } from './conversation-flow.ts';
import { readHistory } from './conversation-history.ts';
import type { Messenger } from './messenger.ts';
import type { ConversationModule } from './modules/conversation-module.ts';
import { createParticipantMessages } from './participant-message.ts';
import { createRequestGuard, type RequestGuard } from './request-validator.ts';
import type { PromptSettingsSource } from './system-prompts.ts';
import type { ToolRegistry } from './tool-registry.ts';
import type { TurnHooks } from './turn-hooks.ts';
import type { ToolCallObserver } from './turn-recorder.ts';
import { createTurnRunner } from './turn-runner.ts';

/**
 * The synthetic input of the enrollment greeting (specification §Enrollment, step 6). Never stored as a participant
 * message.
 */
export const GREETING_HINT = '<Hint: The user has joined the conversation and is expecting a greeting>';

export interface ConversationFlowDependencies {
  store: Store;
  llm: LlmClient;
  registry: ToolRegistry;
  messenger: Messenger;
  clock: Clock;
  lock: ParticipantLock;
  modules: Record<ConversationState, ConversationModule>;
  hooks?: TurnHooks;
  config: { chatHistoryLimit: number; debug: boolean; toolProtocol?: ToolProtocol };
  log: Log;
  onToolCall?: ToolCallObserver;
  /** Checks every request before it is sent: `throw` mode in tests, `repair` (the default) in production. */
  requestGuard?: RequestGuard;
  /** Fixed texts (fallback replies) and poll recognition in every language; defaults to the built-in catalogues. */
  messages?: MessageCatalogue;
  /** A participant's own system prompts and tone adaptation (a trial arm's); absent: the modules' defaults. */
  promptSettings?: PromptSettingsSource;
}

export function createConversationFlow(dependencies: ConversationFlowDependencies): ConversationFlow {
  const { store, clock, lock, log } = dependencies;
  const guard = dependencies.requestGuard ?? createRequestGuard({ mode: 'repair', log });
  const messages = dependencies.messages ?? createBuiltInMessageCatalogue();
  const participantMessages = createParticipantMessages({ ...dependencies, messages });
  const runTurn = createTurnRunner({ ...dependencies, guard, messages });

  async function loadParticipant(participantId: string): Promise<Participant> {
    const participant = await store.participants.get(participantId);
    if (!participant) throw new AppError('not_found', `participant ${participantId} not found`);
    return participant;
  }

  /** A turn whose user message is a synthetic hint over the stored history. */
  function hintedTurn(participantId: string, hint: string, sourceMessageId: string | undefined): Promise<TurnResult> {
    return lock.run(participantId, async () => {
      const participant = await loadParticipant(participantId);
      const now = clock.now();
      const { history, module } = await store.transaction(async () => ({
        history: await readHistory(store, participantId),
        module: await participantMessages.route(participantId, now),
      }));
      return runTurn({ participant, userText: hint, synthetic: true, sourceMessageId }, module, history);
    });
  }

  return {
    handleMessage(message) {
      return lock.run(message.participantId, async () => {
        const participant = await loadParticipant(message.participantId);
        const userText = message.pollAnswer ? formatPollAnswer(message.pollAnswer) : message.text;
        if (!userText.trim()) throw new AppError('invalid_input', 'message text is empty');
        const { history, module } =
          (await participantMessages.resume(message, userText)) ??
          (await participantMessages.record(message, userText));
        return runTurn(
          {
            participant,
            userText,
            synthetic: false,
            sourceMessageId: message.sourceMessageId,
            ...(message.holdOnLlmError ? { holdOnLlmError: true } : {}),
            ...(message.withReply ? { withReply: message.withReply } : {}),
          },
          module,
          history,
        );
      });
    },
    greet(participantId) {
      return hintedTurn(participantId, GREETING_HINT, undefined);
    },
    continueConversation(participantId, turn) {
      return hintedTurn(participantId, turn.hint, turn.sourceMessageId);
    },
  };
}
