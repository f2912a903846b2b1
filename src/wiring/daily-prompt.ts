/** The daily prompt job and a trial's micro-randomised decision points (decided once each, in the job's transaction). */
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import { createDailyPromptHandler } from '../scheduling/daily-prompt-handler.ts';
import { DAILY_PROMPT_JOB } from '../scheduling/daily-prompt-jobs.ts';
import type { registerTimers } from '../scheduling/timers/index.ts';
import {
  createDecisionOutcomeHandler,
  createDecisionPointHandler,
  DECISION_OUTCOME_JOB,
  DECISION_POINT_JOB,
  withDailyPromptDecisions,
} from '../trials/decision-jobs.ts';
import type { Core } from './application.ts';
import type { Trials } from './trials.ts';

export function wireDailyPrompt(
  core: Core,
  parts: {
    habitPrompts: Parameters<typeof createDailyPromptHandler>[0]['promptGenerator'];
    timers: ReturnType<typeof registerTimers>;
    messages: MessageCatalogue;
    study: Trials['study'];
    armSettings: Trials['armSettings'];
  },
): void {
  const { config, log, clock, store, newId, messenger, runner, notifyRunner } = core;
  const { habitPrompts, timers, messages, study, armSettings } = parts;
  const dailyPromptHandler = createDailyPromptHandler({
    store,
    clock,
    messenger,
    promptGenerator: habitPrompts,
    newId,
    config: {
      prepTimeMinutes: config.scheduling.prepTimeMinutes,
      missedPromptGraceMs: config.scheduling.missedPromptGraceMs,
    },
    log,
    afterPromptSent: timers.afterPromptSent,
    deliveryGuard: armSettings ? armSettings.deliveryGuard(timers.deliveryGuard) : timers.deliveryGuard,
    onJobEnqueued: notifyRunner,
    messages,
  });
  // A trial's decision points at the daily prompt time are decided as its job runs (trials/decision-jobs.ts); a
  // moment decided later than the grace is missed, like the prompt.
  const { missedPromptGraceMs } = config.scheduling;
  runner.register(
    DAILY_PROMPT_JOB,
    study
      ? withDailyPromptDecisions(dailyPromptHandler, { store, clock, messenger, newId, study, missedPromptGraceMs })
      : dailyPromptHandler,
  );
  if (study) {
    // Micro-randomised decision points: decided once each, in the job's transaction (trials/decision-jobs.ts).
    runner.register(
      DECISION_POINT_JOB,
      createDecisionPointHandler({
        store,
        clock,
        messenger,
        newId,
        study,
        missedPromptGraceMs,
        onJobEnqueued: notifyRunner,
      }),
    );
    runner.register(DECISION_OUTCOME_JOB, createDecisionOutcomeHandler({ store, clock, study }));
  }
}
