/**
 * `ConversationFlow.processResponse` (specification §The turn) as small steps:
 * 1. record the participant's message (transcript + working history), apply poll effects and let the scheduling
 *    hooks react — one transaction, so a reply and the cancellation of its reminder commit together;
 * 2. route by `conversationState` (empty or unknown → INTAKE, persisted);
 * 3. run the module's tool loop (no transaction held: LLM calls are slow);
 * 4. send the reply and append it to the working history, in one transaction (when that fails, the failure is logged
 *    and the reply still goes, alone);
 * 5. after a FEEDBACK turn, cancel pending feedback timers; in debug mode, send `🐛 DEBUG:` messages.
 */
import { ConversationState, isConversationState } from '../domain/conversation-state.ts';
import { DataKey } from '../domain/data-keys.ts';
import { AppError, errorMessage } from '../domain/errors.ts';
import type { ConversationMessage } from '../domain/history.ts';
import type { Participant } from '../domain/participant.ts';
import { formatPollAnswer } from '../domain/polls.ts';
import { buildToneGuide } from '../domain/tone.ts';
import { createBuiltInMessageCatalogue } from '../i18n/built-in-catalogues.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { LlmClient } from '../llm/llm.ts';
import type { ToolProtocol } from '../llm/text-tool-protocol.ts';
import type { Clock } from '../scheduling/clock.ts';
import type { ParticipantLock } from '../store/participant-lock.ts';
import type { Store, StoreRepositories } from '../store/store.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import { buildChatMessages } from './context-builder.ts';
import { type ConversationFlow, type IncomingMessage, LlmOutageError, type TurnResult } from './conversation-flow.ts';
import { appendToHistory, readHistory } from './conversation-history.ts';
import { debugMessages } from './debug-report.ts';
import type { Logger } from './logger.ts';
import type { Messenger } from './messenger.ts';
import type { ConversationModule } from './modules/conversation-module.ts';
import { readData, readProfile, writeData, writeProfile } from './participant-data.ts';
import { applyPollAnswer } from './poll-effects.ts';
import { createRequestGuard, type RequestGuard } from './request-validator.ts';
import { type PromptSettingsSource, participantSystemPrompt } from './system-prompts.ts';
import { runToolLoop } from './tool-loop.ts';
import type { TurnHooks } from './turn-hooks.ts';
import { createTurnRecorder, type ToolCallObserver } from './turn-recorder.ts';

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
  log: Logger;
  onToolCall?: ToolCallObserver;
  /** Checks every request before it is sent: `throw` mode in tests, `repair` (the default) in production. */
  requestGuard?: RequestGuard;
  /** Fixed texts (fallback replies) and poll recognition in every language; defaults to the built-in catalogues. */
  messages?: MessageCatalogue;
  /** A participant's own system prompts and tone adaptation (a trial arm's); absent: the modules' defaults. */
  promptSettings?: PromptSettingsSource;
}

interface TurnInput {
  participant: Participant;
  withReply?: () => Promise<void>;
  /** What the model sees as this turn's user message. */
  userText: string;
  synthetic: boolean;
  sourceMessageId: string | undefined;
  holdOnLlmError?: boolean;
}

export function createConversationFlow(dependencies: ConversationFlowDependencies): ConversationFlow {
  const { store, clock, lock, log } = dependencies;
  const guard = dependencies.requestGuard ?? createRequestGuard({ mode: 'repair', log });
  const messages = dependencies.messages ?? createBuiltInMessageCatalogue();

  async function loadParticipant(participantId: string): Promise<Participant> {
    const participant = await store.participants.get(participantId);
    if (!participant) throw new AppError('not_found', `participant ${participantId} not found`);
    return participant;
  }

  /** Step 2: the sub-state, persisting INTAKE when it is empty or unknown. */
  async function route(repositories: StoreRepositories, participantId: string, now: Date): Promise<ConversationState> {
    const data = await readData(repositories, participantId);
    const stored = data[DataKey.conversationState];
    if (isConversationState(stored)) return stored;
    await writeData(repositories, participantId, { [DataKey.conversationState]: ConversationState.INTAKE }, now);
    await repositories.events.record({
      participantId,
      type: 'state-changed',
      data: { from: stored ?? '', to: ConversationState.INTAKE, source: 'routing-default' },
      createdAt: now,
    });
    return ConversationState.INTAKE;
  }

  /** Step 1 for a real message: transcript, poll effects, hooks, working history — one transaction. */
  async function recordParticipantMessage(
    message: IncomingMessage,
    userText: string,
  ): Promise<{ history: ConversationMessage[]; module: ConversationState }> {
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
      const module = await route(store, message.participantId, now);
      return { history, module };
    });
  }

  /**
   * A turn interrupted after step 1 committed (the instance died during the LLM call) is run again by another
   * instance: the message is already in the transcript, its poll effects applied, its hooks run. Recording it again
   * would count a "Done" twice; instead the turn resumes from the recorded history.
   */
  async function resumeRecordedMessage(
    message: IncomingMessage,
    userText: string,
  ): Promise<{ history: ConversationMessage[]; module: ConversationState } | undefined> {
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
      return { history: before, module: await route(store, message.participantId, now) };
    });
  }

  /**
   * The participant gets a fallback text instead of a model reply (the model failed, answered nothing usable, or
   * looped): an audit event `fallback-sent`, so the organiser sees it next to the turn. Never fails the turn.
   */
  async function recordFallback(
    participantId: string,
    module: ConversationState,
    loop: { outcome: string; error?: string; rounds: number; content: string },
    link: { sourceMessageId?: string },
  ): Promise<void> {
    if (!loop.error) log.warn({ participantId, module, outcome: loop.outcome }, 'no usable model reply: fallback sent');
    try {
      await store.events.record({
        participantId,
        type: 'fallback-sent',
        data: { module, outcome: loop.outcome, error: loop.error ?? null, rounds: loop.rounds, text: loop.content },
        createdAt: clock.now(),
        ...link,
      });
    } catch (error) {
      log.error({ participantId, error: errorMessage(error) }, 'recording the fallback event failed');
    }
  }

  /** Steps 3–5. */
  async function runTurn(
    input: TurnInput,
    module: ConversationState,
    history: ConversationMessage[],
  ): Promise<TurnResult> {
    const { participant } = input;
    const now = clock.now();
    const moduleDefinition = dependencies.modules[module];
    const data = await readData(store, participant.id);
    const profile = await readProfile(store, participant.id, now);
    const contextBlocks = moduleDefinition.contextBlocks({ participant, profile, data, now });
    const settings = await dependencies.promptSettings?.(participant.id, module.toLowerCase());
    const toneGuide = settings?.toneAdaptation === false ? '' : buildToneGuide(profile.tone);
    const link = input.sourceMessageId ? { sourceMessageId: input.sourceMessageId } : {};
    const language = participant.language ?? messages.defaultLanguage;
    const systemPrompt = participantSystemPrompt(
      settings,
      { text: moduleDefinition.systemPrompt, languagePrompts: moduleDefinition.languagePrompts },
      language,
    );

    const toolProtocol = dependencies.config.toolProtocol ?? 'native';
    const tools = dependencies.registry.definitions(moduleDefinition.toolNames);
    const loop = await runToolLoop({
      toolProtocol,
      llm: dependencies.llm,
      registry: dependencies.registry,
      toolNames: moduleDefinition.toolNames,
      context: { participantId: participant.id, module, sourceMessageId: input.sourceMessageId },
      buildMessages: (loopMessages) =>
        guard(
          buildChatMessages({
            systemPrompt,
            language,
            contextBlocks,
            toneGuide,
            history,
            userMessage: { content: input.userText, synthetic: input.synthetic },
            loopMessages: [...loopMessages],
            historyLimit: dependencies.config.chatHistoryLimit,
            toolProtocol,
            tools,
          }),
          { purpose: module },
        ),
      recorder: createTurnRecorder({
        store,
        clock,
        participantId: participant.id,
        module,
        sourceMessageId: input.sourceMessageId,
        onToolCall: dependencies.onToolCall,
      }),
      now: () => clock.now().getTime(),
      transaction: (fn) => store.transaction(() => fn()),
      purpose: module.toLowerCase(),
      fallbackText: {
        emptyResponse: messages.t(language, 'reply.emptyResponse'),
        roundsExhausted: messages.t(language, 'reply.roundsExhausted'),
        llmUnavailable: messages.t(language, 'reply.llmUnavailable'),
      },
    });
    if (loop.error) log.error({ participantId: participant.id, module, error: loop.error }, 'LLM call failed');
    if (loop.outcome === 'llm_error' && input.holdOnLlmError) throw new LlmOutageError(loop.error ?? 'unknown');
    if (loop.outcome !== 'content') await recordFallback(participant.id, module, loop, link);

    const sendReply = async () => {
      // The last model call's provenance row, when the loop left it to be written with the reply.
      const recorded = await loop.recordProvenance?.();
      const llmCallId = loop.llmCallId ?? (loop.outcome === 'content' ? recorded : undefined);
      return dependencies.messenger.send(
        participant.id,
        { type: 'text', text: loop.content },
        {
          kind: 'reply',
          module,
          ...link,
          ...(llmCallId === undefined ? {} : { llmCallId }),
          ...(loop.model ? { model: loop.model } : {}),
        },
      );
    };
    const repliedAt = clock.now();
    try {
      // The reply and its working-history entry commit together: one unit of work instead of two.
      await store.transaction(async () => {
        await appendToHistory(store, participant.id, [
          { role: 'assistant', content: loop.content, timestamp: repliedAt.toISOString() },
        ]);
        if (module === ConversationState.FEEDBACK) {
          await dependencies.hooks?.onFeedbackTurn?.({ participantId: participant.id, at: repliedAt });
        }
        await sendReply();
        await input.withReply?.();
      });
    } catch (error) {
      // Scenario 10: losing the working-history entry degrades context, not the turn: the reply still goes, alone
      // (nothing of the failed unit of work was kept). Failing again, it fails the turn as before.
      log.error({ participantId: participant.id, error: errorMessage(error) }, 'saving conversation history failed');
      await sendReply();
      await input.withReply?.();
    }

    if (dependencies.config.debug) {
      const latestProfile = await readProfile(store, participant.id, repliedAt);
      for (const text of debugMessages({ module, profile: latestProfile, loop })) {
        await dependencies.messenger.send(participant.id, { type: 'text', text }, { kind: 'debug', module, ...link });
      }
    }
    return { reply: loop.content, module, toolsCalled: loop.toolCalls.map((call) => call.name) };
  }

  /** A turn whose user message is a synthetic hint over the stored history. */
  function hintedTurn(participantId: string, hint: string, sourceMessageId: string | undefined): Promise<TurnResult> {
    return lock.run(participantId, async () => {
      const participant = await loadParticipant(participantId);
      const now = clock.now();
      const { history, module } = await store.transaction(async () => ({
        history: await readHistory(store, participantId),
        module: await route(store, participantId, now),
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
          (await resumeRecordedMessage(message, userText)) ?? (await recordParticipantMessage(message, userText));
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
