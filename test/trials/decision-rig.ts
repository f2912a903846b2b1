/**
 * Decision points in process: the real participant service (which arms them at enrollment), job runner, decision
 * handlers and outbox messenger on a store (SQLite in memory unless given), a manual clock.
 */
import { createOutboxMessenger } from '../../src/channels/outbox-messenger.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import { silentLog } from '../../src/observability/log.ts';
import { createManualClock } from '../../src/scheduling/clock.ts';
import { createJobRunner } from '../../src/scheduling/job-runner-service.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import {
  createDecisionOutcomeHandler,
  createDecisionPointHandler,
  DECISION_OUTCOME_JOB,
  DECISION_POINT_JOB,
} from '../../src/trials/decision-jobs.ts';
import { createTrialService } from '../../src/trials/trial-service.ts';
import { createTrialParticipantService, designOf } from './trial-fixture.ts';

export const HOUR = 3_600_000;
export const NUDGE = 'Take a short walk now?';

export const decisionStudy = designOf(`
study: { id: dp-trial, seed: "decision-point-seed" }
arms:
  - { id: a, label: A }
  - { id: b, label: B }
decision_points:
  - id: nudge
    moment: { type: local_times, times: ["18:00", "12:00"], jitter_minutes: 30 }
    unavailable_when: [paused, quiet_hours, answered_today]
    quiet_hours: { start: "17:00", end: "19:00" }
    options: [send, skip]
    messages: { send: { en: "${NUDGE}" } }
    probabilities:
      default: { send: 0.5, skip: 0.5 }
      by_arm: { b: { send: 1, skip: 0 } }
    proximal_outcome: { type: replied_within, hours: 2 }
`);

export type DecisionRig = Awaited<ReturnType<typeof createDecisionRig>>;

export async function createDecisionRig(options: { store?: Store; idPrefix?: string } = {}) {
  const store = options.store ?? (await createSqliteStore({ filename: ':memory:' }));
  // Monday 2 March 2026, 09:00 in Toronto.
  const clock = createManualClock(new Date('2026-03-02T14:00:00.000Z'));
  const generated = sequentialIds();
  const newId = (prefix: string) => `${options.idPrefix ?? ''}${generated(prefix)}`;
  const lock = createInProcessLock();
  const messenger = createOutboxMessenger({ store, clock, newId });
  const runner = createJobRunner({ store, clock, lock, log: silentLog });
  const study = decisionStudy;
  const handler = createDecisionPointHandler({ store, clock, messenger, newId, study, missedPromptGraceMs: HOUR });
  runner.register(DECISION_POINT_JOB, handler);
  runner.register(DECISION_OUTCOME_JOB, createDecisionOutcomeHandler({ store, clock, study }));
  // Deliveries are not what these tests look at: the outbox's rows are.
  runner.register('deliver_message', async () => undefined);
  const participants = createTrialParticipantService({ store, messenger, lock, clock, newId, study });
  const trials = createTrialService({ store, clock, study });
  return {
    store,
    clock,
    runner,
    handler,
    participants,
    trials,
    advance: (milliseconds: number) => runner.advanceTo(new Date(clock.now().getTime() + milliseconds)),
    /** The nudges recorded for the participant (outbound transcript entries). */
    async nudges(participantId: string) {
      const entries = await store.transcript.list(participantId, { limit: 500 });
      return entries.filter((entry) => entry.role === 'assistant' && entry.content === NUDGE);
    },
  };
}
