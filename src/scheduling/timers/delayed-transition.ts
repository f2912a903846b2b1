/**
 * Delayed sub-state transitions (specification §Timers, scenario 5): `transition_state` with `delay_minutes > 0`
 * enqueues a `state_transition` job; when it fires it performs the immediate transition through the one transition
 * function.
 */
import { isConversationState } from '../../domain/conversation-state.ts';
import { DataKey } from '../../domain/data-keys.ts';
import { writeData } from '../../domain/participant-data.ts';
import type { DelayedTransitionScheduler } from '../../engine/delayed-transitions.ts';
import { transitionConversationState } from '../../engine/state-transition.ts';
import type { Job } from '../../store/ports/job-queue.ts';
import { runTimerJob } from './run-timer-job.ts';
import type { TimerDependencies } from './timer-dependencies.ts';
import { enqueueTimerJob, TIMER_ID_DATA_KEY, TimerJobKind } from './timer-jobs.ts';

export interface StateTransitionPayload extends Record<string, unknown> {
  target_state: string;
  reason?: string;
  source_message_id?: string;
}

export function createDelayedTransitionScheduler(
  dependencies: Pick<TimerDependencies, 'newId' | 'store'>,
): DelayedTransitionScheduler {
  return {
    async schedule(request) {
      const runAt = new Date(request.now.getTime() + request.delayMinutes * 60_000);
      const payload: StateTransitionPayload = {
        target_state: request.target,
        ...(request.reason ? { reason: request.reason } : {}),
        ...(request.sourceMessageId ? { source_message_id: request.sourceMessageId } : {}),
      };
      const job = await enqueueTimerJob(dependencies, {
        kind: TimerJobKind.STATE_TRANSITION,
        participantId: request.participantId,
        runAt,
        payload,
        now: request.now,
      });
      return { jobId: job.id, runAt };
    },
  };
}

/** The `state_transition` job handler. */
export function createStateTransitionHandler(dependencies: TimerDependencies): (job: Job) => Promise<void> {
  const { store } = dependencies;
  return (job) =>
    runTimerJob(dependencies, job, TIMER_ID_DATA_KEY[TimerJobKind.STATE_TRANSITION], async ({ participant, now }) => {
      const payload = job.payload as Partial<StateTransitionPayload>;
      await writeData(store, participant.id, { [DataKey.stateTransitionTimerID]: '' }, now);
      if (!isConversationState(payload.target_state)) {
        dependencies.log.warn(
          { job_id: job.id, target_state: payload.target_state },
          'state transition without a valid target ignored',
        );
        return [];
      }
      await transitionConversationState(store, {
        participantId: participant.id,
        target: payload.target_state,
        source: 'delayed-transition',
        now,
        ...(typeof payload.reason === 'string' ? { reason: payload.reason } : {}),
        ...(typeof payload.source_message_id === 'string' ? { sourceMessageId: payload.source_message_id } : {}),
      });
      return [];
    });
}
