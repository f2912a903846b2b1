/**
 * The scheduling layer assembled as the composition root will assemble it, on a manual clock: store, runner,
 * `scheduler` tool, daily-prompt handler, a recording messenger and a scripted prompt generator.
 */
import { sequentialIds } from '../../src/domain/ids.ts';
import { silentLog } from '../../src/domain/log.ts';
import type { Participant } from '../../src/domain/participant.ts';
import { createRecordingMessenger, type RecordingMessenger } from '../../src/engine/recording-messenger.ts';
import type { ToolResult } from '../../src/engine/tool.ts';
import { createManualClock, type ManualClock } from '../../src/scheduling/clock.ts';
import { createDailyPromptHandler } from '../../src/scheduling/daily-prompt-handler.ts';
import type { AfterPromptSentHook, PromptDeliveryGuard } from '../../src/scheduling/daily-prompt-hooks.ts';
import { DAILY_PROMPT_JOB } from '../../src/scheduling/daily-prompt-jobs.ts';
import type { JobRunner } from '../../src/scheduling/job-runner.ts';
import { createJobRunner } from '../../src/scheduling/job-runner-service.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import type { Store } from '../../src/store/store.ts';
import { createSchedulerTool } from '../../src/tools/scheduler-tool.ts';
import {
  createFakePromptGenerator,
  createMemoryStore,
  enrollParticipant,
  type FakePromptGenerator,
} from './scheduling-fixtures.ts';

export interface DeliveryHarness {
  store: Store;
  clock: ManualClock;
  runner: JobRunner;
  messenger: RecordingMessenger;
  generator: FakePromptGenerator;
  participant: Participant;
  handler: ReturnType<typeof createDailyPromptHandler>;
  /** Calls the `scheduler` tool as the model would, for participant `p_1`. */
  schedule(args: Record<string, unknown>): Promise<ToolResult>;
}

export interface DeliveryHarnessOptions {
  start: Date;
  /** An existing store (restart tests); a fresh in-memory one otherwise. */
  store?: Store;
  /** Enrol `p_1` (default true; false when reopening a store that already has them). */
  enroll?: boolean;
  participant?: Partial<Participant>;
  prompts?: Parameters<typeof createFakePromptGenerator>[0];
  missedPromptGraceMs?: number;
  afterPromptSent?: AfterPromptSentHook;
  deliveryGuard?: PromptDeliveryGuard;
  idPrefix?: string;
  /** The messenger the handler sends with (e.g. one that fails once); a fresh recording messenger otherwise. */
  messenger?: RecordingMessenger;
}

export async function createDeliveryHarness(options: DeliveryHarnessOptions): Promise<DeliveryHarness> {
  const store = options.store ?? (await createMemoryStore());
  const clock = createManualClock(options.start);
  const participant =
    options.enroll === false
      ? ((await store.participants.get('p_1')) as Participant)
      : await enrollParticipant(store, clock.now(), options.participant);
  const sequential = sequentialIds();
  const newId = (prefix: string) => `${options.idPrefix ?? ''}${sequential(prefix)}`;
  const messenger = options.messenger ?? createRecordingMessenger();
  const generator = createFakePromptGenerator(options.prompts ?? ['After your coffee, take a 10-minute walk.']);
  const runner = createJobRunner({ store, clock, lock: createInProcessLock(), log: silentLog, owner: 'test-runner' });
  const config = { prepTimeMinutes: 10, missedPromptGraceMs: options.missedPromptGraceMs ?? 60 * 60_000 };
  const handler = createDailyPromptHandler({
    store,
    clock,
    messenger,
    promptGenerator: generator,
    newId,
    config,
    log: silentLog,
    random: () => 0.5,
    onJobEnqueued: () => runner.notify(),
    ...(options.afterPromptSent ? { afterPromptSent: options.afterPromptSent } : {}),
    ...(options.deliveryGuard ? { deliveryGuard: options.deliveryGuard } : {}),
  });
  runner.register(DAILY_PROMPT_JOB, handler);
  const tool = createSchedulerTool({ store, clock, newId, random: () => 0.5, config });
  return {
    store,
    clock,
    runner,
    messenger,
    generator,
    participant,
    handler,
    schedule: (args) =>
      tool.execute(tool.schema.parse(args), { participantId: 'p_1', module: 'INTAKE', sourceMessageId: undefined }),
  };
}
