/**
 * Auto-feedback enforcement (specification §Timers, scenario 11): five minutes after a scheduled prompt the
 * conversation moves to FEEDBACK, so the participant's eventual answer reaches the feedback module. Any immediate
 * transition before then cancels it (the one transition function does, see `state-transition.ts`).
 */
import { ConversationState } from '../../domain/conversation-state.ts';
import { DataKey } from '../../domain/data-keys.ts';
import { conversationStateOf, writeData } from '../../domain/participant-data.ts';
import { transitionConversationState } from '../../engine/state-transition.ts';
import type { Job } from '../../store/store.ts';
import { runTimerJob } from './run-timer-job.ts';
import type { TimerDependencies } from './timer-dependencies.ts';
import { enqueueTimerJob, TIMER_ID_DATA_KEY, TimerJobKind } from './timer-jobs.ts';

export const AUTO_FEEDBACK_DELAY_MS = 5 * 60_000;
/**
 * A prompt sent more recently than this before the timer fires is not the one the timer was for: that newer
 * prompt's own timer enforces feedback for it. Slightly under the delay, so the timer's own prompt never counts.
 */
export const AUTO_FEEDBACK_NEWER_PROMPT_WINDOW_MS = 4.5 * 60_000;

/**
 * After a scheduled prompt (when `AUTO_FEEDBACK_AFTER_PROMPT_ENABLED`): replaces any pending enforcement, through the
 * timers' store in the caller's unit of work.
 */
export function scheduleAutoFeedbackEnforcement(
  dependencies: Pick<TimerDependencies, 'store' | 'newId'>,
  request: { participantId: string; sentAt: Date; now: Date },
): Promise<Job> {
  return enqueueTimerJob(dependencies, {
    kind: TimerJobKind.AUTO_FEEDBACK,
    participantId: request.participantId,
    runAt: new Date(request.sentAt.getTime() + AUTO_FEEDBACK_DELAY_MS),
    payload: { prompt_sent_at: request.sentAt.toISOString() },
    now: request.now,
  });
}

/** The `auto_feedback` job handler. */
export function createAutoFeedbackHandler(dependencies: TimerDependencies): (job: Job) => Promise<void> {
  const { store } = dependencies;
  return (job) =>
    runTimerJob(
      dependencies,
      job,
      TIMER_ID_DATA_KEY[TimerJobKind.AUTO_FEEDBACK],
      async ({ participant, data, now }) => {
        const participantId = participant.id;
        const alreadyInFeedback = conversationStateOf(data) === ConversationState.FEEDBACK;
        const lastPromptSentAt = Date.parse(data[DataKey.lastPromptSentAt] ?? '');
        const newerPromptSent = lastPromptSentAt > now.getTime() - AUTO_FEEDBACK_NEWER_PROMPT_WINDOW_MS;
        if (alreadyInFeedback || newerPromptSent) {
          // runTimerJob checked the id names this job, so clearing it cannot hide a newer timer.
          await writeData(store, participantId, { [DataKey.autoFeedbackTimerID]: '' }, now);
          return [];
        }
        // keepAutoFeedbackTimer: this job is the auto-feedback timer; cancelling "it" by key would be meaningless.
        await transitionConversationState(store, {
          participantId,
          target: ConversationState.FEEDBACK,
          source: 'auto-feedback',
          reason: 'no reply within 5 minutes of the scheduled prompt',
          now,
          keepAutoFeedbackTimer: true,
        });
        await writeData(store, participantId, { [DataKey.autoFeedbackTimerID]: '' }, now);
        return [];
      },
    );
}
