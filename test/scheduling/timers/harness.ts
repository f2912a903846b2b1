/**
 * The timers on the real job runner and the real daily-prompt handler, SQLite in memory, a manual clock and a
 * recording messenger. A participant's message is simulated as the engine records it (under the participant lock,
 * `onParticipantMessage` inside the transaction that records it); `sendScheduledPrompt` performs the daily-prompt
 * handler's steps at an arbitrary instant for tests that need one, `scheduleDaily` uses the real handler.
 */

import { DataKey, type StateData } from '../../../src/domain/data-keys.ts';
import { sequentialIds } from '../../../src/domain/ids.ts';
import { silentLog } from '../../../src/domain/log.ts';
import type { Participant } from '../../../src/domain/participant.ts';
import { newFlowState, writeData } from '../../../src/domain/participant-data.ts';
import { DONE_POLL } from '../../../src/domain/polls.ts';
import { readDataWithHistory } from '../../../src/engine/conversation-history.ts';
import type { HabitPromptGenerator } from '../../../src/engine/habit-prompt-generator.ts';
import { createRecordingMessenger, type RecordingMessenger } from '../../../src/engine/recording-messenger.ts';
import { createManualClock, type ManualClock } from '../../../src/scheduling/clock.ts';
import { createDailyPromptHandler } from '../../../src/scheduling/daily-prompt-handler.ts';
import { armSchedule, DAILY_PROMPT_JOB } from '../../../src/scheduling/daily-prompt-jobs.ts';
import type { JobRunner } from '../../../src/scheduling/job-runner.ts';
import { createJobRunner } from '../../../src/scheduling/job-runner-service.ts';
import {
  type ConversationTimers,
  DEFAULT_TIMER_CONFIG,
  registerTimers,
  type TimerConfig,
} from '../../../src/scheduling/timers/index.ts';
import { createInProcessLock, type ParticipantLock } from '../../../src/store/participant-lock.ts';
import { createSqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import type { Job, Store, StoredEvent } from '../../../src/store/store.ts';
import { waitUntil } from '../../support/wait-until.ts';

/** Monday 2 March 2026, 09:00 in Toronto (EST, UTC−5). */
export const START = new Date('2026-03-02T14:00:00.000Z');
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

export const HABIT_PROMPT = 'After you pour your morning coffee, take a 5-minute walk around the block.';

export interface TimerHarness {
  store: Store;
  clock: ManualClock;
  lock: ParticipantLock;
  messenger: RecordingMessenger;
  runner: JobRunner;
  timers: ConversationTimers;
  /** Enrols an active participant (Toronto unless overridden) with an empty flow state. */
  enrol(overrides?: Partial<Participant>): Promise<Participant>;
  /**
   * The daily-prompt handler's steps, now: the delivery guard, the prompt and the Done poll, then one transaction
   * recording it with `afterPromptSent`, then the follow-ups it returned. Returns the sent instant.
   */
  sendScheduledPrompt(participantId: string, prompt?: string): Promise<Date>;
  /** A fixed daily schedule (`HH:MM` local, 10 minutes prep) delivered by the real `daily_prompt` handler. */
  scheduleDaily(participantId: string, fixedTime: string, timezone?: string): Promise<void>;
  /** What the engine does with a participant's message (step 1): transcript and `onParticipantMessage`, one tx. */
  reply(participantId: string, text: string, at?: Date): Promise<void>;
  /**
   * The interleaving a lock exists for: the runner claims the (due) job, its handler queues behind the participant
   * lock, which `work` holds; the handler runs once `work` is done. Resolves when the handler has finished.
   */
  whileClaimed(participantId: string, jobId: string, work: () => Promise<void>): Promise<void>;
  /** Moves the clock forward, running every job that falls due on the way. Returns how many ran. */
  advance(milliseconds: number): Promise<number>;
  data(participantId: string): Promise<StateData>;
  setData(participantId: string, entries: StateData): Promise<void>;
  pendingJobs(participantId: string): Promise<Job[]>;
  events(participantId: string, type: string): Promise<StoredEvent[]>;
  /** Texts and poll questions sent to the participant, in order. */
  sentTexts(participantId: string): string[];
  close(): Promise<void>;
}

export async function createTimerHarness(config: Partial<TimerConfig> = {}): Promise<TimerHarness> {
  const store = await createSqliteStore({ filename: ':memory:' });
  const clock = createManualClock(START);
  const lock = createInProcessLock();
  const messenger = createRecordingMessenger();
  const newId = sequentialIds();
  const runner = createJobRunner({ store, clock, lock, log: silentLog });
  let enrolled = 0;
  const promptGenerator: HabitPromptGenerator = {
    generate: async () => ({ ok: true, prompt: HABIT_PROMPT, warnings: [] }),
  };
  const timers = registerTimers({
    runner,
    store,
    clock,
    newId,
    messenger,
    config: { ...DEFAULT_TIMER_CONFIG, ...config },
    log: silentLog,
  });
  runner.register(
    DAILY_PROMPT_JOB,
    createDailyPromptHandler({
      store,
      clock,
      messenger,
      promptGenerator,
      newId,
      config: { prepTimeMinutes: 10, missedPromptGraceMs: HOUR },
      log: silentLog,
      afterPromptSent: timers.afterPromptSent,
      deliveryGuard: timers.deliveryGuard,
      onJobEnqueued: () => runner.notify(),
    }),
  );

  return {
    store,
    clock,
    lock,
    messenger,
    runner,
    timers,
    async enrol(overrides = {}) {
      enrolled += 1;
      const now = clock.now();
      const participant: Participant = {
        id: newId('p'),
        phoneNumber: `+1555123${String(1000 + enrolled).padStart(4, '0')}`,
        name: 'Ada',
        gender: '',
        ethnicity: '',
        background: '',
        timezone: 'America/Toronto',
        channel: '',
        status: 'active',
        enrolledAt: now,
        createdAt: now,
        updatedAt: now,
        ...overrides,
      };
      await store.participants.create(participant);
      await store.flowStates.save(newFlowState(participant.id, now));
      return participant;
    },
    async sendScheduledPrompt(participantId, prompt = HABIT_PROMPT) {
      return lock.run(participantId, async () => {
        const sentAt = clock.now();
        const participant = await store.participants.get(participantId);
        if (!participant) throw new Error(`unknown participant ${participantId}`);
        const decision = await timers.deliveryGuard({ participant, now: sentAt });
        if (!decision.deliver) return sentAt;
        await messenger.send(participantId, { type: 'text', text: prompt }, { kind: 'proactive', module: 'scheduler' });
        await messenger.send(
          participantId,
          { type: 'poll', question: DONE_POLL.question, options: [...DONE_POLL.options] },
          { kind: 'poll', module: 'scheduler' },
        );
        const followUps = await store.transaction(async (tx) => {
          await writeData(tx, participantId, { [DataKey.lastPromptSentAt]: sentAt.toISOString() }, sentAt);
          return timers.afterPromptSent({ participantId, participant, sentAt, prompt, fallback: false });
        });
        for (const send of followUps ?? []) await messenger.send(send.participantId, send.message, send.options);
        return sentAt;
      });
    },
    async scheduleDaily(participantId, fixedTime, timezone = 'America/Toronto') {
      const now = clock.now();
      await store.transaction((tx) =>
        armSchedule(
          { store: tx, newId, random: () => 0, prepTimeMinutes: 10 },
          {
            participantId,
            schedule: {
              id: newId('sched'),
              type: 'fixed',
              fixed_time: fixedTime,
              timezone,
              created_at: now.toISOString(),
              timer_id: '',
            },
            now,
          },
        ),
      );
    },
    reply(participantId, text, at = clock.now()) {
      return lock.run(participantId, () =>
        store.transaction(async (tx) => {
          await tx.transcript.append([{ participantId, role: 'user', kind: 'message', content: text, createdAt: at }]);
          await timers.turnHooks.onParticipantMessage({ participantId, at, sourceMessageId: undefined });
        }),
      );
    },
    async whileClaimed(participantId, jobId, work) {
      let run: Promise<number> | undefined;
      await lock.run(participantId, async () => {
        run = runner.runDue();
        await waitUntil(`${jobId} to be running`, async () => (await store.jobs.get(jobId))?.status === 'running', {
          intervalMs: 0,
        });
        await work();
      });
      await run;
    },
    advance(milliseconds) {
      return runner.advanceTo(new Date(clock.now().getTime() + milliseconds));
    },
    data: (participantId) => readDataWithHistory(store, participantId),
    setData: async (participantId, entries) => {
      await writeData(store, participantId, entries, clock.now());
    },
    pendingJobs: (participantId) => store.jobs.listPending({ participantId }),
    events: (participantId, type) => store.events.list({ participantId, type }),
    sentTexts: (participantId) => messenger.textsFor(participantId),
    async close() {
      await runner.stop();
      await store.close();
    },
  };
}
