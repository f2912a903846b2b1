/**
 * The only top-level state used in production (specification §State). Behaviour is chosen by the sub-state, never by
 * this.
 */
export const TOP_LEVEL_STATE = 'CONVERSATION_ACTIVE' as const;
export type TopLevelState = typeof TOP_LEVEL_STATE;

/** The conversation sub-state stored under the `conversationState` data key. */
export const ConversationState = {
  INTAKE: 'INTAKE',
  FEEDBACK: 'FEEDBACK',
} as const;
export type ConversationState = (typeof ConversationState)[keyof typeof ConversationState];

export const DEFAULT_CONVERSATION_STATE: ConversationState = ConversationState.INTAKE;

export function isConversationState(value: unknown): value is ConversationState {
  return value === ConversationState.INTAKE || value === ConversationState.FEEDBACK;
}

/** Progress of feedback collection after an in-conversation habit prompt (specification §Timers). */
export const FeedbackState = {
  WAITING_INITIAL: 'waiting_initial',
  FOLLOWUP_SENT: 'followup_sent',
  COMPLETED: 'completed',
} as const;
export type FeedbackState = (typeof FeedbackState)[keyof typeof FeedbackState];
