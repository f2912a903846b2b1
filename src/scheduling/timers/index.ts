/**
 * The conversation timers, wired in one place: `registerTimers` registers every timer handler on the job runner and
 * returns the hooks the engine, the daily-prompt handler and the participant lifecycle call.
 *
 * Composition root:
 *   const timers = registerTimers({ runner, store, clock, newId, messenger, config: config.scheduling, log });
 *   createConversationFlow({ …, hooks: timers.turnHooks });
 *   createTransitionStateTool({ …, delayedTransitions: timers.delayedTransitions });
 *   createGenerateHabitPromptTool({ …, hooks: timers.turnHooks });
 *   createDailyPromptHandler({ …, afterPromptSent: timers.afterPromptSent, deliveryGuard: timers.deliveryGuard });
 *   pause / complete / withdraw / delete: `timers.cancelAllParticipantJobs(id, now)` in the status change's unit of
 *   work.
 */
import type { StateData } from '../../domain/data-keys.ts';
import { readData } from '../../domain/participant-data.ts';
import type { DelayedTransitionScheduler } from '../../engine/delayed-transitions.ts';
import type { TurnHooks } from '../../engine/turn-hooks.ts';
import type { AfterPromptSentHook, PromptDeliveryGuard } from '../daily-prompt-hooks.ts';
import type { JobRunner } from '../job-runner.ts';
import { createAutoFeedbackHandler, scheduleAutoFeedbackEnforcement } from './auto-feedback.ts';
import {
  createDailyPromptReminderHandler,
  handleDailyPromptReply,
  scheduleDailyPromptReminder,
} from './daily-prompt-reminder.ts';
import { createDelayedTransitionScheduler, createStateTransitionHandler } from './delayed-transition.ts';
import { recordParticipantReply, recordProactiveSent, shouldSendDailyPrompt } from './engagement-guard.ts';
import {
  cancelPendingFeedback,
  createFeedbackFollowupHandler,
  createFeedbackTimeoutHandler,
  scheduleFeedbackCollection,
} from './feedback-timers.ts';
import { checkIntensityPoll } from './intensity-poll.ts';
import { cancelAllParticipantJobs } from './participant-jobs.ts';
import { ALL_TIMER_FEATURES, type TimerDependencies, type TimerFeatures } from './timer-dependencies.ts';
import { TimerJobKind } from './timer-jobs.ts';

export { recordProactiveSent, shouldSendDailyPrompt } from './engagement-guard.ts';
export { cancelPendingFeedback } from './feedback-timers.ts';
export { cancelAllParticipantJobs } from './participant-jobs.ts';
export { DEFAULT_TIMER_CONFIG, type TimerConfig, type TimerDependencies } from './timer-dependencies.ts';
export { TimerJobKind, timerJobKey } from './timer-jobs.ts';

export interface ConversationTimers {
  /** For `createConversationFlow`: reply handling, feedback timers. */
  readonly turnHooks: Required<TurnHooks>;
  /** For the `transition_state` tool. */
  readonly delayedTransitions: DelayedTransitionScheduler;
  /**
   * For `createDailyPromptHandler`, in the unit of work that records a sent prompt: counts it as a proactive
   * message (engagement guard), schedules the reminder and, when enabled, auto-feedback enforcement, and returns
   * the intensity poll (at most one a local day) for the handler to send after the commit.
   */
  readonly afterPromptSent: AfterPromptSentHook;
  /** For `createDailyPromptHandler`: refuses the prompt of an idle participant when `IDLE_PAUSES_PROMPTS` is set. */
  readonly deliveryGuard: PromptDeliveryGuard;
  /** False when the participant is idle and `IDLE_PAUSES_PROMPTS` is set, config bound. */
  shouldSendDailyPrompt(data: StateData): boolean;
  /** Pause, complete, withdraw, delete: through the timers' store, in the caller's unit of work. */
  cancelAllParticipantJobs(participantId: string, now: Date): Promise<number>;
}

export function registerTimers(options: TimerDependencies & { runner: JobRunner }): ConversationTimers {
  const { runner, config, clock, newId, store } = options;
  const dependencies: TimerDependencies = options;
  runner.register(TimerJobKind.DAILY_PROMPT_REMINDER, createDailyPromptReminderHandler(dependencies));
  runner.register(TimerJobKind.AUTO_FEEDBACK, createAutoFeedbackHandler(dependencies));
  runner.register(TimerJobKind.FEEDBACK_TIMEOUT, createFeedbackTimeoutHandler(dependencies));
  runner.register(TimerJobKind.FEEDBACK_FOLLOWUP, createFeedbackFollowupHandler(dependencies));
  runner.register(TimerJobKind.STATE_TRANSITION, createStateTransitionHandler(dependencies));

  const scheduler = createDelayedTransitionScheduler({ newId, store });
  /** Recomputes the runner's wake-up once the job just enqueued is committed (before, it could not see it). */
  const notifyOnCommit = (): void => store.afterCommit(() => runner.notify());
  const featuresOf = async (participantId: string): Promise<TimerFeatures> =>
    options.features ? options.features(participantId) : ALL_TIMER_FEATURES;
  return {
    turnHooks: {
      async onParticipantMessage(event) {
        await recordParticipantReply(store, event.participantId, event.at, event.sourceMessageId);
        await handleDailyPromptReply(store, event);
      },
      async onImmediatePrompt(event) {
        if (!(await featuresOf(event.participantId)).feedbackFollowups) return;
        await scheduleFeedbackCollection(dependencies, event);
        notifyOnCommit();
      },
      onFeedbackTurn: (event) => cancelPendingFeedback(store, event.participantId, event.at),
    },
    delayedTransitions: {
      async schedule(request) {
        const scheduled = await scheduler.schedule(request);
        notifyOnCommit();
        return scheduled;
      },
    },
    async afterPromptSent(event) {
      const now = clock.now();
      const { participant, sentAt } = event;
      await recordProactiveSent(store, participant.id, now, config);
      const features = await featuresOf(participant.id);
      if (features.reminders) {
        await scheduleDailyPromptReminder(dependencies, {
          participantId: participant.id,
          to: participant.phoneNumber,
          sentAt,
          now,
        });
      }
      if (config.autoFeedbackAfterPromptEnabled && features.autoFeedback) {
        await scheduleAutoFeedbackEnforcement(dependencies, { participantId: participant.id, sentAt, now });
      }
      if (!features.intensityPoll) return [];
      const poll = await checkIntensityPoll(store, {
        participant,
        promptSentAt: sentAt,
        now,
        ...(options.messages ? { messages: options.messages } : {}),
      });
      return poll ? [poll] : [];
    },
    async deliveryGuard({ participant }) {
      // Under staff review (a risk flag, safety/): no prompt until a person resolves it; the next day is armed.
      if (await store.alerts.underReview(participant.id)) return { deliver: false, reason: 'under-staff-review' };
      // Taken over by staff who chose to pause the timers: the coach's prompt would talk over them.
      if ((await store.takeovers.get(participant.id))?.timers === 'pause') {
        return { deliver: false, reason: 'taken-over' };
      }
      const data = await readData(store, participant.id);
      return shouldSendDailyPrompt(data, config) ? { deliver: true } : { deliver: false, reason: 'participant-idle' };
    },
    shouldSendDailyPrompt: (data) => shouldSendDailyPrompt(data, config),
    cancelAllParticipantJobs: (participantId, now) => cancelAllParticipantJobs(store, participantId, now),
  };
}
