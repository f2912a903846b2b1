/**
 * Points where the scheduling layer joins a conversation turn without the engine depending on it.
 * Each runs inside the unit of work of the engine's own write and writes through the store, joining it, so a
 * participant's reply and the cancellation of their reminder commit together.
 */

export interface ParticipantMessageEvent {
  participantId: string;
  /** When the message was received. */
  at: Date;
  sourceMessageId: string | undefined;
}

export interface TurnHooks {
  /** A real participant message was recorded (never called for synthetic hints). */
  onParticipantMessage?(event: ParticipantMessageEvent): Promise<void>;
  /** `generate_habit_prompt` delivered a prompt inside the conversation (delivery_mode `immediate`). */
  onImmediatePrompt?(event: { participantId: string; at: Date }): Promise<void>;
  /** A FEEDBACK turn finished: pending feedback timers are cancelled (specification §The turn, step 6). */
  onFeedbackTurn?(event: { participantId: string; at: Date }): Promise<void>;
}
