/**
 * Steps 3 to 5 of a turn (conversation-flow-service.ts): the module's tool loop (no transaction held: LLM calls are
 * slow), the reply sent and appended to the working history in one transaction (when that fails, the failure is
 * logged and the reply still goes, alone), then after a FEEDBACK turn the feedback hook, and in debug mode the
 * `🐛 DEBUG:` messages. A fallback text instead of a model reply is recorded as a `fallback-sent` event.
 */

import type { Clock } from '../domain/clock.ts';
import { ConversationState } from '../domain/conversation-state.ts';
import { errorMessage } from '../domain/errors.ts';
import type { ConversationMessage } from '../domain/history.ts';
import type { Log } from '../domain/log.ts';
import type { Participant } from '../domain/participant.ts';
import { readData, readProfile } from '../domain/participant-data.ts';
import { buildToneGuide } from '../domain/tone.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { LlmClient } from '../llm/llm.ts';
import type { ToolProtocol } from '../llm/text-tool-protocol.ts';
import type { Store } from '../store/store.ts';
import { buildChatMessages } from './context-builder.ts';
import { LlmOutageError, type TurnResult } from './conversation-flow.ts';
import { appendToHistory } from './conversation-history.ts';
import { debugMessages } from './debug-report.ts';
import type { Messenger } from './messenger.ts';
import type { ConversationModule } from './modules/conversation-module.ts';
import type { RequestGuard } from './request-validator.ts';
import { type PromptSettingsSource, participantSystemPrompt } from './system-prompts.ts';
import { runToolLoop } from './tool-loop.ts';
import type { ToolRegistry } from './tool-registry.ts';
import type { TurnHooks } from './turn-hooks.ts';
import { createTurnRecorder, type ToolCallObserver } from './turn-recorder.ts';

export interface TurnInput {
  participant: Participant;
  withReply?: () => Promise<void>;
  /** What the model sees as this turn's user message. */
  userText: string;
  synthetic: boolean;
  sourceMessageId: string | undefined;
  holdOnLlmError?: boolean;
}

/** What a turn uses (see `ConversationFlowDependencies`), with the request guard and the catalogue chosen. */
export interface TurnDependencies {
  store: Store;
  llm: LlmClient;
  registry: ToolRegistry;
  messenger: Messenger;
  clock: Clock;
  modules: Record<ConversationState, ConversationModule>;
  hooks?: TurnHooks;
  config: { chatHistoryLimit: number; debug: boolean; toolProtocol?: ToolProtocol };
  log: Log;
  onToolCall?: ToolCallObserver;
  guard: RequestGuard;
  messages: MessageCatalogue;
  promptSettings?: PromptSettingsSource;
}

export type TurnRunner = (
  input: TurnInput,
  module: ConversationState,
  history: ConversationMessage[],
) => Promise<TurnResult>;

export function createTurnRunner(dependencies: TurnDependencies): TurnRunner {
  const { store, clock, log, messages } = dependencies;

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
  return async function runTurn(
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
        dependencies.guard(
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
  };
}
