/**
 * The conversation engine wired in-process for benchmarks, as `test/support/engine-harness.ts` wires it for tests,
 * with two differences: the store is the benchmark's (file-backed SQLite or PostgreSQL), and replies go through the
 * production outbox messenger (transcript entry + durable `deliver_message` job in one transaction) rather than a
 * recording fake, so a measured turn does every write a production turn does. The LLM is the scripted fake: the
 * numbers are PromptPipe's own cost per turn, without any model latency.
 */
import { createOutboxMessenger } from '../../src/channels/outbox-messenger.ts';
import { ConversationState } from '../../src/domain/conversation-state.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import { silentLog } from '../../src/domain/log.ts';
import type { ConversationFlow } from '../../src/engine/conversation-flow.ts';
import { createConversationFlow } from '../../src/engine/conversation-flow-service.ts';
import { createHabitPromptGenerator } from '../../src/engine/habit-prompt-generator-service.ts';
import { createFeedbackModule } from '../../src/engine/modules/feedback-module.ts';
import { createIntakeModule } from '../../src/engine/modules/intake-module.ts';
import { loadSystemPrompts } from '../../src/engine/system-prompts.ts';
import { createToolRegistry } from '../../src/engine/tool-registry.ts';
import type { ChatRequest, ChatResponse, LlmClient } from '../../src/llm/llm.ts';
import { createManualClock, type ManualClock } from '../../src/scheduling/clock.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import type { Store } from '../../src/store/store.ts';
import { createGenerateHabitPromptTool } from '../../src/tools/generate-habit-prompt-tool.ts';
import { createSaveUserProfileTool } from '../../src/tools/save-user-profile-tool.ts';
import { createTransitionStateTool } from '../../src/tools/transition-state-tool.ts';
import { BENCH_START } from '../support/fixtures.ts';

export interface BenchEngine {
  readonly flow: ConversationFlow;
  readonly clock: ManualClock;
}

/**
 * An instant model that answers like one that saves something to the profile, then replies: a `save_user_profile`
 * call first, and once the request ends with the tool's result, the reply text. Arguments differ every time so the
 * profile really changes. It keeps nothing: the tests' fake LLM deep-copies and keeps every request for assertions,
 * which cost ≈ 7 % of a turn here and is no part of the engine's work.
 */
export function createToolThenReplyModel(): LlmClient {
  let toolCallCount = 0;
  const model = 'bench-instant';
  return {
    model,
    async chat(request: ChatRequest): Promise<ChatResponse> {
      if (request.messages.at(-1)?.role === 'tool') {
        return {
          content: 'Thanks, I saved that. What time of day would suit your habit prompt best?',
          toolCalls: [],
          model,
        };
      }
      toolCallCount += 1;
      const toolCall = {
        id: `call_${toolCallCount}`,
        name: 'save_user_profile',
        arguments: JSON.stringify({ additional_info: `Prefers short walks (${toolCallCount})` }),
      };
      return { content: '', toolCalls: [toolCall], model };
    },
  };
}

/** The engine on `store`, production defaults otherwise (request guard in `repair` mode, unlimited history). */
export function createBenchEngine(store: Store): BenchEngine {
  const llm = createToolThenReplyModel();
  const clock = createManualClock(BENCH_START);
  const prompts = loadSystemPrompts({});
  const generator = createHabitPromptGenerator({
    store,
    llm,
    clock,
    systemPrompt: prompts.promptGenerator,
    log: silentLog,
  });
  const registry = createToolRegistry([
    createSaveUserProfileTool({ store, clock }),
    createGenerateHabitPromptTool({ store, clock, generator }),
    createTransitionStateTool({ store, clock }),
  ]);
  const flow = createConversationFlow({
    store,
    llm,
    registry,
    messenger: createOutboxMessenger({ store, clock, newId: sequentialIds() }),
    clock,
    lock: createInProcessLock(),
    modules: {
      [ConversationState.INTAKE]: createIntakeModule(prompts.intake),
      [ConversationState.FEEDBACK]: createFeedbackModule(prompts.feedback),
    },
    config: { chatHistoryLimit: -1, debug: false },
    log: silentLog,
  });
  return {
    flow,
    clock,
  };
}
