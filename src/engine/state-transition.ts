/**
 * The one function every sub-state change goes through: the `transition_state` tool, a delayed transition firing,
 * auto-feedback enforcement and the admin endpoint. It persists the new sub-state, cancels a pending auto-feedback
 * timer (specification §Tools, `transition_state`) and records a `state-changed` event — all in one transaction.
 */
import type { ConversationState } from '../domain/conversation-state.ts';
import { DataKey } from '../domain/data-keys.ts';
import { conversationStateOf, readData, writeData } from '../domain/participant-data.ts';
import type { Store } from '../store/store.ts';

export const autoFeedbackJobKey = (participantId: string): string => `auto_feedback:${participantId}`;
export const stateTransitionJobKey = (participantId: string): string => `state_transition:${participantId}`;

export interface TransitionRequest {
  participantId: string;
  target: ConversationState;
  /** Who asked: `tool`, `delayed-transition`, `auto-feedback`, `admin`, `routing-default`. */
  source: string;
  reason?: string;
  sourceMessageId?: string;
  now: Date;
  /** Auto-feedback enforcement is itself the auto-feedback timer: it must not cancel itself. */
  keepAutoFeedbackTimer?: boolean;
}

export interface TransitionOutcome {
  from: ConversationState;
  to: ConversationState;
  changed: boolean;
  cancelledAutoFeedback: boolean;
}

/**
 * Changes the sub-state through `store` (the routed store the caller was built with, never a repository from below
 * it) in one unit of work: its own, or the caller's when one is open (an admin override that also cancels the delayed
 * transition, a timer's decision, a tool exchange), so everything commits together.
 */
export function transitionConversationState(store: Store, request: TransitionRequest): Promise<TransitionOutcome> {
  return store.transaction(async () => {
    const data = await readData(store, request.participantId);
    const from = conversationStateOf(data);
    let cancelledAutoFeedback = false;
    if (!request.keepAutoFeedbackTimer) {
      cancelledAutoFeedback =
        (await store.jobs.cancelByKey(autoFeedbackJobKey(request.participantId), request.now)) > 0;
    }
    await writeData(
      store,
      request.participantId,
      {
        [DataKey.conversationState]: request.target,
        ...(request.keepAutoFeedbackTimer ? {} : { [DataKey.autoFeedbackTimerID]: '' }),
      },
      request.now,
    );
    await store.events.record({
      participantId: request.participantId,
      type: 'state-changed',
      data: {
        from,
        to: request.target,
        source: request.source,
        ...(request.reason ? { reason: request.reason } : {}),
        cancelled_auto_feedback: cancelledAutoFeedback,
      },
      ...(request.sourceMessageId ? { sourceMessageId: request.sourceMessageId } : {}),
      createdAt: request.now,
    });
    return { from, to: request.target, changed: from !== request.target, cancelledAutoFeedback };
  });
}
