/**
 * An in-process PromptPipe engine for tests: SQLite in memory, the scripted fake LLM, a recording messenger and a
 * manual clock. A week of a study runs in milliseconds with it.
 */
import { ConversationState } from '../../src/domain/conversation-state.ts';
import { DataKey, type StateData } from '../../src/domain/data-keys.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import { silentLog } from '../../src/domain/log.ts';
import { formatParticipantBackground, type Participant } from '../../src/domain/participant.ts';
import { newFlowState, readData, writeData } from '../../src/domain/participant-data.ts';
import { parseProfile, type UserProfile } from '../../src/domain/profile.ts';
import type { ConversationFlow } from '../../src/engine/conversation-flow.ts';
import { createConversationFlow } from '../../src/engine/conversation-flow-service.ts';
import { readDataWithHistory } from '../../src/engine/conversation-history.ts';
import { createHabitPromptGenerator } from '../../src/engine/habit-prompt-generator-service.ts';
import { createFeedbackModule } from '../../src/engine/modules/feedback-module.ts';
import { createIntakeModule } from '../../src/engine/modules/intake-module.ts';
import { createRecordingMessenger, type RecordingMessenger } from '../../src/engine/recording-messenger.ts';
import { createRequestGuard } from '../../src/engine/request-validator.ts';
import { loadSystemPrompts, type SystemPrompts } from '../../src/engine/system-prompts.ts';
import type { Tool } from '../../src/engine/tool.ts';
import { createToolRegistry, type ToolRegistry } from '../../src/engine/tool-registry.ts';
import type { TurnHooks } from '../../src/engine/turn-hooks.ts';
import { createFakeLlm, type FakeLlm, type FakeResponder, type FakeStep } from '../../src/llm/fake-llm.ts';
import type { ToolProtocol } from '../../src/llm/text-tool-protocol.ts';
import { createManualClock, type ManualClock } from '../../src/scheduling/clock.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { createGenerateHabitPromptTool } from '../../src/tools/generate-habit-prompt-tool.ts';
import { createSaveUserProfileTool } from '../../src/tools/save-user-profile-tool.ts';
import { createTransitionStateTool } from '../../src/tools/transition-state-tool.ts';

export const START = new Date('2026-03-02T14:00:00.000Z');

export interface EngineHarness {
  store: Store;
  llm: FakeLlm;
  messenger: RecordingMessenger;
  clock: ManualClock;
  registry: ToolRegistry;
  flow: ConversationFlow;
  prompts: SystemPrompts;
  participant: Participant;
  send(
    text: string,
    extra?: { pollAnswer?: { question?: string; option: string } },
  ): ReturnType<ConversationFlow['handleMessage']>;
  data(): Promise<StateData>;
  profile(): Promise<UserProfile>;
  setData(entries: StateData): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  script?: FakeStep[] | FakeResponder;
  debug?: boolean;
  chatHistoryLimit?: number;
  hooks?: TurnHooks;
  extraTools?: Tool[];
  store?: Store;
  participant?: Partial<Participant>;
  /** `LLM_TOOL_PROTOCOL`: in `text` mode the fake model writes its tool calls as `<tool_call>` text. */
  toolProtocol?: ToolProtocol;
}

export async function createEngineHarness(options: HarnessOptions = {}): Promise<EngineHarness> {
  const store = options.store ?? (await createSqliteStore({ filename: ':memory:' }));
  const llm = createFakeLlm(options.script ?? [], options.toolProtocol ? { toolProtocol: options.toolProtocol } : {});
  const messenger = createRecordingMessenger();
  const clock = createManualClock(START);
  const prompts = loadSystemPrompts({});
  const generator = createHabitPromptGenerator({
    store,
    llm,
    clock,
    systemPrompt: prompts.promptGenerator,
    log: silentLog,
    requestGuard: createRequestGuard({ mode: 'throw', log: silentLog }),
  });
  const registry = createToolRegistry([
    createSaveUserProfileTool({ store, clock }),
    createGenerateHabitPromptTool({ store, clock, generator, ...(options.hooks ? { hooks: options.hooks } : {}) }),
    createTransitionStateTool({ store, clock }),
    ...(options.extraTools ?? []),
  ]);
  const flow = createConversationFlow({
    store,
    llm,
    registry,
    messenger,
    clock,
    lock: createInProcessLock(),
    modules: {
      [ConversationState.INTAKE]: createIntakeModule(prompts.intake),
      [ConversationState.FEEDBACK]: createFeedbackModule(prompts.feedback),
    },
    ...(options.hooks ? { hooks: options.hooks } : {}),
    config: {
      chatHistoryLimit: options.chatHistoryLimit ?? -1,
      debug: options.debug ?? false,
      ...(options.toolProtocol ? { toolProtocol: options.toolProtocol } : {}),
    },
    log: silentLog,
    requestGuard: createRequestGuard({ mode: 'throw', log: silentLog }),
  });
  const newId = sequentialIds();
  const participant: Participant = {
    id: newId('p'),
    phoneNumber: '+15551230001',
    name: 'Ada',
    gender: 'female',
    ethnicity: '',
    background: 'Night-shift nurse',
    timezone: 'America/Toronto',
    channel: '',
    status: 'active',
    enrolledAt: START,
    createdAt: START,
    updatedAt: START,
    ...options.participant,
  };
  await store.participants.create(participant);
  await store.flowStates.save(
    newFlowState(participant.id, START, {
      [DataKey.participantBackground]: formatParticipantBackground(participant),
    }),
  );
  // Each message its own id, like the inbound ids of the real pipeline (the flow recognises a message it recorded).
  let sent = 0;
  return {
    store,
    llm,
    messenger,
    clock,
    registry,
    flow,
    prompts,
    participant,
    send: (text, extra = {}) => {
      sent += 1;
      return flow.handleMessage({
        participantId: participant.id,
        text,
        receivedAt: clock.now(),
        sourceMessageId: `in_${sent}_${clock.now().getTime()}`,
        ...(extra.pollAnswer ? { pollAnswer: extra.pollAnswer } : {}),
      });
    },
    data: () => readDataWithHistory(store, participant.id),
    profile: async () => parseProfile((await readData(store, participant.id))[DataKey.userProfile], clock.now()),
    setData: async (entries) => {
      await writeData(store, participant.id, entries, clock.now());
    },
    close: () => store.close(),
  };
}

/** The text of every system message of a request, joined. */
export function systemText(request: { messages: { role: string; content: string }[] }): string {
  return request.messages
    .filter((message) => message.role === 'system')
    .map((message) => message.content)
    .join('\n');
}

/** Tool results a request carries, parsed, in either protocol (`tool` messages or `<tool_result>` blocks). */
export function toolResultsOf(
  request: { messages: { role: string; content: string }[] } | undefined,
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON results, asserted field by field in the tests
): any[] {
  // biome-ignore lint/suspicious/noExplicitAny: see above
  const results: any[] = [];
  for (const message of request?.messages ?? []) {
    if (message.role === 'tool') results.push(JSON.parse(message.content));
    if (message.role === 'user') {
      for (const match of message.content.matchAll(/<tool_result name="[^"]*" id="[^"]*">([\s\S]*?)<\/tool_result>/g)) {
        results.push(JSON.parse(match[1] ?? ''));
      }
    }
  }
  return results;
}
