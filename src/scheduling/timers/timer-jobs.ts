/**
 * The timer job kinds of a conversation (specification §Timers), their dedup keys and the data keys that hold their job
 * ids.
 *
 * Glossary:
 * - timer: a durable job that belongs to one participant and is "the" pending job of its kind for them; enqueuing a
 *   new one replaces the old one through its dedup key `{kind}:{participantId}`.
 * - timer id: the job id, also written to a data key (`dailyPromptReminderTimerID`, …) in the same transaction, so
 *   a handler can tell whether it is still the current timer and an operator can see what is pending.
 */
import { DataKey } from '../../domain/data-keys.ts';
import { writeData } from '../../domain/participant-data.ts';
import type { Job, StoreRepositories } from '../../store/store.ts';
import type { TimerDependencies } from './timer-dependencies.ts';

export const TimerJobKind = {
  DAILY_PROMPT_REMINDER: 'daily_prompt_reminder',
  AUTO_FEEDBACK: 'auto_feedback',
  FEEDBACK_TIMEOUT: 'feedback_timeout',
  FEEDBACK_FOLLOWUP: 'feedback_followup',
  STATE_TRANSITION: 'state_transition',
} as const;
export type TimerJobKind = (typeof TimerJobKind)[keyof typeof TimerJobKind];

/** Where each timer keeps its job id. */
export const TIMER_ID_DATA_KEY: Readonly<Record<TimerJobKind, DataKey>> = {
  [TimerJobKind.DAILY_PROMPT_REMINDER]: DataKey.dailyPromptReminderTimerID,
  [TimerJobKind.AUTO_FEEDBACK]: DataKey.autoFeedbackTimerID,
  [TimerJobKind.FEEDBACK_TIMEOUT]: DataKey.feedbackTimerID,
  [TimerJobKind.FEEDBACK_FOLLOWUP]: DataKey.feedbackFollowupTimerID,
  [TimerJobKind.STATE_TRANSITION]: DataKey.stateTransitionTimerID,
};

/** `daily_prompt_reminder:{id}`, `auto_feedback:{id}`, … (the same format as `autoFeedbackJobKey`). */
export function timerJobKey(kind: TimerJobKind, participantId: string): string {
  return `${kind}:${participantId}`;
}

export interface TimerJobRequest {
  kind: TimerJobKind;
  participantId: string;
  runAt: Date;
  payload?: Record<string, unknown>;
  now: Date;
}

/**
 * Enqueues (or replaces) a participant's timer of this kind and records its id under the timer's data key, through
 * the timers' store: inside the caller's unit of work, the job and the id that names it commit together.
 */
export async function enqueueTimerJob(
  dependencies: Pick<TimerDependencies, 'store' | 'newId'>,
  request: TimerJobRequest,
): Promise<Job> {
  const { store, newId } = dependencies;
  const job = await store.jobs.enqueue(
    {
      id: newId('job'),
      kind: request.kind,
      participantId: request.participantId,
      runAt: request.runAt,
      payload: request.payload ?? {},
      dedupKey: timerJobKey(request.kind, request.participantId),
    },
    request.now,
  );
  await writeData(store, request.participantId, { [TIMER_ID_DATA_KEY[request.kind]]: job.id }, request.now);
  return job;
}

/**
 * Cancels a participant's pending timer of this kind and clears its id, through the store it is given (the timers'
 * own, so it joins the caller's unit of work). Returns whether a job was cancelled.
 */
export async function cancelTimerJob(
  store: StoreRepositories,
  kind: TimerJobKind,
  participantId: string,
  now: Date,
): Promise<boolean> {
  const cancelled = await store.jobs.cancelByKey(timerJobKey(kind, participantId), now);
  await writeData(store, participantId, { [TIMER_ID_DATA_KEY[kind]]: '' }, now);
  return cancelled > 0;
}
