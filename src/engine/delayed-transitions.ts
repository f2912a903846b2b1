/**
 * Port for delayed sub-state transitions (specification §Timers), implemented by the scheduling layer. The
 * `transition_state` tool calls it when `delay_minutes > 0`; without an implementation the tool says delayed
 * transitions are unavailable.
 */
import type { ConversationState } from '../domain/conversation-state.ts';

export interface DelayedTransitionRequest {
  participantId: string;
  target: ConversationState;
  delayMinutes: number;
  reason?: string;
  sourceMessageId?: string;
  now: Date;
}

export interface DelayedTransitionScheduler {
  /**
   * Enqueues (or replaces) the `state_transition:{participantId}` job and stores its id under
   * `stateTransitionTimerID`, through the scheduler's store: in the caller's unit of work when there is one.
   */
  schedule(request: DelayedTransitionRequest): Promise<{ jobId: string; runAt: Date }>;
}
