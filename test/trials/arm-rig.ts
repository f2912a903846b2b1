/**
 * The daily prompt with a study design in process: the real daily-prompt handler, timers, job runner and
 * participant service (SQLite in memory, manual clock), a model that counts its calls, arms set by staff override.
 */
import { sequentialIds } from '../../src/domain/ids.ts';
import type { HabitPromptGenerator } from '../../src/engine/habit-prompt-generator.ts';
import { createRecordingMessenger } from '../../src/engine/recording-messenger.ts';
import { silentLog } from '../../src/observability/log.ts';
import { createManualClock } from '../../src/scheduling/clock.ts';
import { createDailyPromptHandler } from '../../src/scheduling/daily-prompt-handler.ts';
import { armSchedule, DAILY_PROMPT_JOB } from '../../src/scheduling/daily-prompt-jobs.ts';
import { createJobRunner } from '../../src/scheduling/job-runner-service.ts';
import { DEFAULT_TIMER_CONFIG, registerTimers } from '../../src/scheduling/timers/index.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { createArmSettings } from '../../src/trials/arm-settings.ts';
import { withDailyPromptDecisions } from '../../src/trials/decision-jobs.ts';
import type { StudyInForce } from '../../src/trials/study-design-file.ts';
import { createTrialService } from '../../src/trials/trial-service.ts';
import { createTrialParticipantService, designOf, phoneFor } from './trial-fixture.ts';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const MODEL_PROMPT = 'After your coffee, take a five-minute walk.';

export const study = designOf(`
study: { id: arms-trial, seed: "arm-settings-seed" }
arms:
  - { id: coach, label: Coach }
  - id: static
    label: Static
    daily_prompt:
      mode: static
      texts: { en: ["Static one.", "Static two."], es: ["Estático uno."] }
  - { id: assessment, label: Assessment only, daily_prompt: { mode: none } }
  - id: assessment-poll
    label: Assessment by Done poll
    daily_prompt: { mode: none, done_poll: true }
    features: { reminders: false, auto_feedback: false, intensity_poll: false }
  - id: quiet
    label: Coach without nudges
    features: { reminders: false, auto_feedback: false, intensity_poll: false }
`);

export type ArmRig = Awaited<ReturnType<typeof createArmRig>>;

export async function createArmRig(options: { study?: StudyInForce } = {}) {
  const design = options.study ?? study;
  const store = await createSqliteStore({ filename: ':memory:' });
  const clock = createManualClock(new Date('2026-03-02T14:00:00.000Z'));
  const lock = createInProcessLock();
  const messenger = createRecordingMessenger();
  const newId = sequentialIds();
  const runner = createJobRunner({ store, clock, lock, log: silentLog });
  const modelCalls: string[] = [];
  const model: HabitPromptGenerator = {
    async generate(participantId) {
      modelCalls.push(participantId);
      return { ok: true, prompt: MODEL_PROMPT, warnings: [] };
    },
  };
  const arms = createArmSettings({ study: design, store, clock });
  const timers = registerTimers({
    runner,
    store,
    clock,
    newId,
    messenger,
    config: DEFAULT_TIMER_CONFIG,
    log: silentLog,
    features: arms.timerFeatures,
  });
  const dailyPromptHandler = withDailyPromptDecisions(
    createDailyPromptHandler({
      store,
      clock,
      messenger,
      promptGenerator: arms.promptGenerator(model),
      newId,
      config: { prepTimeMinutes: 10, missedPromptGraceMs: HOUR },
      log: silentLog,
      afterPromptSent: timers.afterPromptSent,
      deliveryGuard: arms.deliveryGuard(timers.deliveryGuard),
      onJobEnqueued: () => runner.notify(),
    }),
    { store, clock, messenger, newId, study: design, missedPromptGraceMs: HOUR },
  );
  runner.register(DAILY_PROMPT_JOB, dailyPromptHandler);
  const participants = createTrialParticipantService({ store, messenger, lock, clock, newId, study: design });
  const trials = createTrialService({ store, clock, study: design });

  /** Enrolls someone, puts them in `arm` (a staff override) and gives them a daily prompt at 10:00 Toronto. */
  async function enrollInArm(arm: string, index: number, language = 'en') {
    const participant = await participants.enroll(
      { phoneNumber: phoneFor(index), timezone: 'America/Toronto', language },
      { greet: false },
    );
    await trials.overrideArm(participant.id, { armId: arm, reason: 'test arm', by: 'test' });
    const now = clock.now();
    await store.transaction((tx) =>
      armSchedule(
        { store: tx, newId, random: () => 0, prepTimeMinutes: 10 },
        {
          participantId: participant.id,
          schedule: {
            id: newId('sched'),
            type: 'fixed',
            fixed_time: '10:00',
            timezone: 'America/Toronto',
            created_at: now.toISOString(),
            timer_id: '',
          },
          now,
        },
      ),
    );
    return participant.id;
  }
  const advance = (milliseconds: number) => runner.advanceTo(new Date(clock.now().getTime() + milliseconds));
  const pendingKinds = async (participantId: string) =>
    (await store.jobs.listPending({ participantId })).map((job) => job.kind);
  return {
    store,
    clock,
    messenger,
    modelCalls,
    enrollInArm,
    advance,
    pendingKinds,
    runner,
    participants,
    trials,
    dailyPromptHandler,
    newId,
  };
}
