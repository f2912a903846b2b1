/**
 * The conversation timers, wired in one place: `registerTimers` registers every timer handler on the job runner and
 * returns the hooks the engine, the daily-prompt handler and the participant lifecycle call.
 *
 * Composition root:
 *   const timers = registerTimers({ runner, store, clock, newId, messenger, config: config.scheduling, log });
 *   createConversationFlow({ …, turnHooks: timers.turnHooks, delayedTransitions: timers.delayedTransitions });
 *   daily-prompt handler: `timers.shouldSendDailyPrompt(data)` before sending; after sending, in one transaction,
 *     `timers.recordProactiveSent(tx, id, now)` and `timers.afterPromptSent(tx, { participantId, sentAt, prompt })`.
 *   pause / complete / withdraw / delete: `cancelAllParticipantJobs(tx, id, now)` in the status-changing transaction.
 */
import type { StateData } from '../../domain/data-keys.ts';
import type { DelayedTransitionScheduler } from '../../engine/delayed-transitions.ts';
import type { TurnHooks } from '../../engine/turn-hooks.ts';
import type { StoreRepositories } from '../../store/store.ts';
import type { JobRunner } from '../job-runner.ts';
import { createAutoFeedbackHandler, scheduleAutoFeedbackEnforcement } from './auto-feedback.ts';
import {
  createDailyPromptReminderHandler,
  handleDailyPromptReply,
  scheduleDailyPromptReminder,
} from './daily-prompt-reminder.ts';
import { createDelayedTransitionScheduler, createStateTransitionHandler } from './delayed-transition.ts';
import {
  type ProactiveSentOutcome,
  recordParticipantReply,
  recordProactiveSent,
  shouldSendDailyPrompt,
} from './engagement-guard.ts';
import {
  cancelPendingFeedback,
  createFeedbackFollowupHandler,
  createFeedbackTimeoutHandler,
  scheduleFeedbackCollection,
} from './feedback-timers.ts';
import { createIntensityPollHandler, INTENSITY_POLL_JOB, scheduleIntensityPollCheck } from './intensity-poll.ts';
import { cancelAllParticipantJobs } from './participant-jobs.ts';
import type { TimerDependencies } from './timer-dependencies.ts';
import { TimerJobKind } from './timer-jobs.ts';

export { EngagementState, recordProactiveSent, shouldSendDailyPrompt } from './engagement-guard.ts';
export { cancelPendingFeedback } from './feedback-timers.ts';
export { INTENSITY_POLL_JOB } from './intensity-poll.ts';
export { cancelAllParticipantJobs } from './participant-jobs.ts';
export { DEFAULT_TIMER_CONFIG, type TimerConfig, type TimerDependencies } from './timer-dependencies.ts';
export { TimerJobKind, timerJobKey } from './timer-jobs.ts';

/** A scheduled habit prompt was sent (with its Done poll). */
export interface ScheduledPromptSent {
  participantId: string;
  sentAt: Date;
  prompt: string;
}

export interface ConversationTimers {
  /** For `createConversationFlow`: reply handling, feedback timers. */
  readonly turnHooks: Required<TurnHooks>;
  /** For the `transition_state` tool. */
  readonly delayedTransitions: DelayedTransitionScheduler;
  /**
   * The daily-prompt handler calls this after sending a prompt, in the transaction that records it: schedules the
   * reminder, the intensity-poll check (a job due at once) and, when enabled, auto-feedback enforcement. Sends
   * nothing itself, so it is safe inside a transaction.
   */
  afterPromptSent(tx: StoreRepositories, event: ScheduledPromptSent): Promise<void>;
  /** Counts the scheduled prompt as an unanswered proactive message (the engagement guard), config bound. */
  recordProactiveSent(tx: StoreRepositories, participantId: string, now: Date): Promise<ProactiveSentOutcome>;
  /** False when the participant is idle and `IDLE_PAUSES_PROMPTS` is set, config bound. */
  shouldSendDailyPrompt(data: StateData): boolean;
  /** Pause, complete, withdraw, delete. */
  cancelAllParticipantJobs(tx: StoreRepositories, participantId: string, now: Date): Promise<number>;
}

export function registerTimers(options: TimerDependencies & { runner: JobRunner }): ConversationTimers {
  const { runner, config, clock, newId } = options;
  const dependencies: TimerDependencies = options;
  runner.register(TimerJobKind.DAILY_PROMPT_REMINDER, createDailyPromptReminderHandler(dependencies));
  runner.register(TimerJobKind.AUTO_FEEDBACK, createAutoFeedbackHandler(dependencies));
  runner.register(TimerJobKind.FEEDBACK_TIMEOUT, createFeedbackTimeoutHandler(dependencies));
  runner.register(TimerJobKind.FEEDBACK_FOLLOWUP, createFeedbackFollowupHandler(dependencies));
  runner.register(TimerJobKind.STATE_TRANSITION, createStateTransitionHandler(dependencies));
  runner.register(INTENSITY_POLL_JOB, createIntensityPollHandler(dependencies));

  const scheduler = createDelayedTransitionScheduler({ newId });
  return {
    turnHooks: {
      async onParticipantMessage(tx, event) {
        await recordParticipantReply(tx, event.participantId, event.at, event.sourceMessageId);
        await handleDailyPromptReply(tx, event);
      },
      async onImmediatePrompt(tx, event) {
        await scheduleFeedbackCollection(tx, event, { config, newId });
        // The runner computes its next wake-up again once this transaction has committed.
        runner.notify();
      },
      onFeedbackTurn: (tx, event) => cancelPendingFeedback(tx, event.participantId, event.at),
    },
    delayedTransitions: {
      async schedule(tx, request) {
        const scheduled = await scheduler.schedule(tx, request);
        runner.notify();
        return scheduled;
      },
    },
    async afterPromptSent(tx, event) {
      const now = clock.now();
      const participant = await tx.participants.get(event.participantId);
      await scheduleDailyPromptReminder(
        tx,
        { participantId: event.participantId, to: participant?.phoneNumber ?? '', sentAt: event.sentAt, now },
        { config, newId },
      );
      await scheduleIntensityPollCheck(
        tx,
        { participantId: event.participantId, sentAt: event.sentAt, now },
        { newId },
      );
      if (config.autoFeedbackAfterPromptEnabled) {
        await scheduleAutoFeedbackEnforcement(
          tx,
          { participantId: event.participantId, sentAt: event.sentAt, now },
          { newId },
        );
      }
      runner.notify();
    },
    recordProactiveSent: (tx, participantId, now) => recordProactiveSent(tx, participantId, now, config),
    shouldSendDailyPrompt: (data) => shouldSendDailyPrompt(data, config),
    cancelAllParticipantJobs,
  };
}
