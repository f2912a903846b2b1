/**
 * The timers on the real job runner, SQLite in memory, a manual clock and a recording messenger. A participant's
 * message and a scheduled prompt are simulated exactly as the engine and the daily-prompt handler perform them:
 * under the participant lock, with the hooks inside the transaction that records them.
 */

import { DataKey, type StateData } from '../../../src/domain/data-keys.ts';
import { sequentialIds } from '../../../src/domain/ids.ts';
import type { Participant } from '../../../src/domain/participant.ts';
import { DONE_POLL } from '../../../src/domain/polls.ts';
import { newFlowState, readData, writeData } from '../../../src/engine/participant-data.ts';
import { createRecordingMessenger, type RecordingMessenger } from '../../../src/engine/recording-messenger.ts';
import { createManualClock, type ManualClock } from '../../../src/scheduling/clock.ts';
import type { JobRunner } from '../../../src/scheduling/job-runner.ts';
import { createJobRunner } from '../../../src/scheduling/job-runner-service.ts';
import { silentLog } from '../../../src/scheduling/scheduling-log.ts';
import {
  type ConversationTimers,
  DEFAULT_TIMER_CONFIG,
  registerTimers,
  type TimerConfig,
} from '../../../src/scheduling/timers/index.ts';
import { createInProcessLock, type ParticipantLock } from '../../../src/store/participant-lock.ts';
import { createSqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import type { Job, Store, StoredEvent } from '../../../src/store/store.ts';

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
  /** What the daily-prompt handler does: send the prompt and the Done poll, then record it and call the hooks. */
  sendScheduledPrompt(participantId: string, prompt?: string): Promise<Date>;
  /** What the engine does with a participant's message (step 1): transcript and `onParticipantMessage`, one tx. */
  reply(participantId: string, text: string, at?: Date): Promise<void>;
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
  const timers = registerTimers({
    runner,
    store,
    clock,
    newId,
    messenger,
    config: { ...DEFAULT_TIMER_CONFIG, ...config },
    log: silentLog,
  });

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
      const sentAt = await lock.run(participantId, async () => {
        const sentAt = clock.now();
        if (!timers.shouldSendDailyPrompt(await readData(store, participantId))) return sentAt;
        await messenger.send(participantId, { type: 'text', text: prompt }, { kind: 'proactive', module: 'scheduler' });
        await messenger.send(
          participantId,
          { type: 'poll', question: DONE_POLL.question, options: [...DONE_POLL.options] },
          { kind: 'poll', module: 'scheduler' },
        );
        await store.transaction(async (tx) => {
          await writeData(tx, participantId, { [DataKey.lastPromptSentAt]: sentAt.toISOString() }, sentAt);
          await timers.recordProactiveSent(tx, participantId, sentAt);
          await timers.afterPromptSent(tx, { participantId, sentAt, prompt });
        });
        return sentAt;
      });
      // The intensity-poll check is a job due now: run it, as the runner would right after the prompt's handler
      // (outside the lock, which its handler takes).
      await runner.runDue();
      return sentAt;
    },
    reply(participantId, text, at = clock.now()) {
      return lock.run(participantId, () =>
        store.transaction(async (tx) => {
          await tx.transcript.append([{ participantId, role: 'user', kind: 'message', content: text, createdAt: at }]);
          await timers.turnHooks.onParticipantMessage(tx, { participantId, at, sourceMessageId: undefined });
        }),
      );
    },
    advance(milliseconds) {
      return runner.advanceTo(new Date(clock.now().getTime() + milliseconds));
    },
    data: (participantId) => readData(store, participantId),
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
