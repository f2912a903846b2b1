/**
 * Feedback timers (specification §Timers), which the original defined but never started. When a habit prompt is
 * delivered inside the conversation, the initial timeout (`FEEDBACK_INITIAL_TIMEOUT`) asks how it went and schedules
 * the follow-up (`FEEDBACK_FOLLOWUP_DELAY`), which asks once more. Every FEEDBACK turn cancels both
 * (`cancelPendingFeedback`).
 *
 * `feedbackState` moves `waiting_initial` → `followup_sent` → `completed`; a timer finding `completed` does nothing.
 */
import { FeedbackState } from '../../domain/conversation-state.ts';
import { DataKey } from '../../domain/data-keys.ts';
import { writeData } from '../../domain/participant-data.ts';
import { appendToHistory } from '../../engine/conversation-history.ts';
import { createBuiltInMessageCatalogue } from '../../i18n/built-in-catalogues.ts';
import type { MessageKey } from '../../i18n/message-catalogue.ts';
import type { Job, StoreRepositories } from '../../store/store.ts';
import type { DeferredSend } from './deferred-sends.ts';
import { recordProactiveSent, shouldSendNudge } from './engagement-guard.ts';
import { recordTimerSkipped, runTimerJob, type TimerJobContext } from './run-timer-job.ts';
import type { TimerConfig, TimerDependencies } from './timer-dependencies.ts';
import { cancelTimerJob, enqueueTimerJob, TIMER_ID_DATA_KEY, TimerJobKind } from './timer-jobs.ts';

/** English texts of the catalogue keys `feedback.initialNudge` and `feedback.followupNudge`. */
export const FEEDBACK_INITIAL_NUDGE =
  'How did it go with the habit we talked about? Reply with a quick update whenever you can.';
export const FEEDBACK_FOLLOWUP_NUDGE =
  'Checking in once more: did you get a chance to try it? Even a one-word answer helps.';

type FeedbackTimerDependencies = Pick<TimerDependencies, 'store' | 'newId'> & {
  config: Pick<TimerConfig, 'feedbackInitialTimeoutMs'>;
};

/**
 * `generate_habit_prompt` delivered a prompt in the conversation: a new feedback cycle starts, written through the
 * timers' store in the turn's unit of work. A follow-up still pending from an earlier prompt is cancelled; it would
 * ask about the wrong prompt. A zero or negative timeout disables the nudges (the state still records that feedback
 * is awaited).
 */
export async function scheduleFeedbackCollection(
  dependencies: FeedbackTimerDependencies,
  request: { participantId: string; at: Date },
): Promise<Job | undefined> {
  const { store } = dependencies;
  const { participantId, at } = request;
  await cancelTimerJob(store, TimerJobKind.FEEDBACK_FOLLOWUP, participantId, at);
  await writeData(store, participantId, { [DataKey.feedbackState]: FeedbackState.WAITING_INITIAL }, at);
  const timeout = dependencies.config.feedbackInitialTimeoutMs;
  if (timeout <= 0) {
    await cancelTimerJob(store, TimerJobKind.FEEDBACK_TIMEOUT, participantId, at);
    return undefined;
  }
  return enqueueTimerJob(dependencies, {
    kind: TimerJobKind.FEEDBACK_TIMEOUT,
    participantId,
    runAt: new Date(at.getTime() + timeout),
    now: at,
  });
}

/**
 * `CancelPendingFeedback`: the participant gave feedback (a FEEDBACK turn ran), so neither nudge is needed.
 * Called by the engine after every FEEDBACK turn with the timers' store, which joins that turn's unit of work.
 */
export async function cancelPendingFeedback(store: StoreRepositories, participantId: string, now: Date): Promise<void> {
  await cancelTimerJob(store, TimerJobKind.FEEDBACK_TIMEOUT, participantId, now);
  await cancelTimerJob(store, TimerJobKind.FEEDBACK_FOLLOWUP, participantId, now);
  await writeData(store, participantId, { [DataKey.feedbackState]: FeedbackState.COMPLETED }, now);
}

/**
 * What both nudges share: nothing once feedback is completed, nothing for an idle participant, otherwise count
 * the proactive message, put it in the working history (the model must see what it asked) and send it.
 */
async function decideNudge(
  context: TimerJobContext,
  kind: typeof TimerJobKind.FEEDBACK_TIMEOUT | typeof TimerJobKind.FEEDBACK_FOLLOWUP,
  textKey: MessageKey,
  dependencies: TimerDependencies,
): Promise<DeferredSend[]> {
  const { store } = dependencies;
  const { participant, data, now, job } = context;
  const text = (dependencies.messages ?? createBuiltInMessageCatalogue()).t(participant.language, textKey);
  const participantId = participant.id;
  await writeData(store, participantId, { [TIMER_ID_DATA_KEY[kind]]: '' }, now);
  if (data[DataKey.feedbackState] === FeedbackState.COMPLETED) return [];
  if (!shouldSendNudge(data)) {
    await recordTimerSkipped(store, { job, now, participantId }, 'participant-idle');
    return [];
  }
  await recordProactiveSent(store, participantId, now, dependencies.config);
  await appendToHistory(store, participantId, [{ role: 'assistant', content: text, timestamp: now.toISOString() }]);
  return [{ participantId, message: { type: 'text', text }, options: { kind: 'proactive', module: 'FEEDBACK' } }];
}

/** The `feedback_timeout` job handler: the first nudge, then the follow-up is scheduled. */
export function createFeedbackTimeoutHandler(dependencies: TimerDependencies): (job: Job) => Promise<void> {
  const { store } = dependencies;
  return (job) =>
    runTimerJob(dependencies, job, TIMER_ID_DATA_KEY[TimerJobKind.FEEDBACK_TIMEOUT], async (context) => {
      const sends = await decideNudge(context, TimerJobKind.FEEDBACK_TIMEOUT, 'feedback.initialNudge', dependencies);
      if (sends.length === 0) return sends;
      const { participant, now } = context;
      await writeData(store, participant.id, { [DataKey.feedbackState]: FeedbackState.FOLLOWUP_SENT }, now);
      const delay = dependencies.config.feedbackFollowupDelayMs;
      if (delay > 0) {
        await enqueueTimerJob(dependencies, {
          kind: TimerJobKind.FEEDBACK_FOLLOWUP,
          participantId: participant.id,
          runAt: new Date(now.getTime() + delay),
          now,
        });
      }
      return sends;
    });
}

/** The `feedback_followup` job handler: the second and last nudge. */
export function createFeedbackFollowupHandler(dependencies: TimerDependencies): (job: Job) => Promise<void> {
  return (job) =>
    runTimerJob(dependencies, job, TIMER_ID_DATA_KEY[TimerJobKind.FEEDBACK_FOLLOWUP], (context) =>
      decideNudge(context, TimerJobKind.FEEDBACK_FOLLOWUP, 'feedback.followupNudge', dependencies),
    );
}
