/**
 * The conversation: the habit-prompt generator, what a trial arm changes, the timers, the tools, the conversation
 * flow with its intake and feedback modules; then the daily prompt (daily-prompt.ts).
 */
import { ConversationState } from '../domain/conversation-state.ts';
import { createConversationFlow } from '../engine/conversation-flow-service.ts';
import { createHabitPromptGenerator } from '../engine/habit-prompt-generator-service.ts';
import { createFeedbackModule } from '../engine/modules/feedback-module.ts';
import { createIntakeModule } from '../engine/modules/intake-module.ts';
import { withExtraTools } from '../engine/modules/with-extra-tools.ts';
import { createRequestGuard } from '../engine/request-validator.ts';
import { createToolRegistry } from '../engine/tool-registry.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { LlmClient } from '../llm/llm.ts';
import { createStaffFlagSink } from '../safety/staff-flag-sink.ts';
import { registerTimers } from '../scheduling/timers/index.ts';
import { createFlagForStaffTool, FLAG_FOR_STAFF_TOOL } from '../tools/flag-for-staff-tool.ts';
import { createGenerateHabitPromptTool } from '../tools/generate-habit-prompt-tool.ts';
import { createSaveUserProfileTool } from '../tools/save-user-profile-tool.ts';
import { createSchedulerTool } from '../tools/scheduler-tool.ts';
import { createTransitionStateTool } from '../tools/transition-state-tool.ts';
import type { Core } from './application.ts';
import { wireDailyPrompt } from './daily-prompt.ts';
import type { Prompts } from './llm.ts';
import type { Safety } from './safety.ts';
import type { Trials } from './trials.ts';

export function wireEngine(
  core: Core,
  parts: {
    llm: LlmClient;
    prompts: Prompts;
    messages: MessageCatalogue;
    safety: Safety;
    study: Trials['study'];
    armSettings: Trials['armSettings'];
  },
) {
  const { config, log, clock, store, newId, messenger, runner, lock, metrics, notifyRunner } = core;
  const { llm, prompts, messages, safety, study, armSettings } = parts;
  const promptSettings = armSettings ? { promptSettings: armSettings.promptSettings } : {};
  const generator = createHabitPromptGenerator({
    store,
    llm,
    clock,
    systemPrompt: prompts.system.promptGenerator,
    log,
    languagePrompts: prompts.languages.promptGenerator,
    defaultLanguage: config.language.defaultLanguage,
    ...promptSettings,
  });
  const habitPrompts = armSettings ? armSettings.promptGenerator(generator) : generator;
  const timers = registerTimers({
    runner,
    store,
    clock,
    newId,
    messenger,
    config: config.scheduling,
    log,
    messages,
    ...(armSettings ? { features: armSettings.timerFeatures } : {}),
  });
  const registry = createToolRegistry([
    createSaveUserProfileTool({
      store,
      clock,
      ...(armSettings ? { toneAdaptation: armSettings.toneAdaptation } : {}),
    }),
    createFlagForStaffTool({
      sink: createStaffFlagSink({ store, alerts: safety.alerts, review: config.safety.review }),
    }),
    createGenerateHabitPromptTool({ store, clock, generator: habitPrompts, hooks: timers.turnHooks }),
    createTransitionStateTool({ store, clock, delayedTransitions: timers.delayedTransitions }),
    createSchedulerTool({
      store,
      clock,
      newId,
      config: { prepTimeMinutes: config.scheduling.prepTimeMinutes },
      onJobEnqueued: notifyRunner,
    }),
  ]);
  const { intake, feedback } = prompts.system;
  const flow = createConversationFlow({
    store,
    llm,
    registry,
    messenger,
    clock,
    lock,
    modules: {
      [ConversationState.INTAKE]: withExtraTools(createIntakeModule(intake, prompts.languages.intake), [
        FLAG_FOR_STAFF_TOOL,
      ]),
      [ConversationState.FEEDBACK]: withExtraTools(createFeedbackModule(feedback, prompts.languages.feedback), [
        FLAG_FOR_STAFF_TOOL,
      ]),
    },
    hooks: timers.turnHooks,
    config: {
      chatHistoryLimit: config.conversation.chatHistoryLimit,
      debug: config.conversation.debug,
      toolProtocol: config.llm.toolProtocol,
    },
    log,
    onToolCall: (call) => metrics.recordToolCall(call.name, call.outcome),
    requestGuard: createRequestGuard({ mode: 'repair', log }),
    messages,
    ...promptSettings,
  });
  wireDailyPrompt(core, { habitPrompts, timers, messages, study, armSettings });
  return flow;
}
