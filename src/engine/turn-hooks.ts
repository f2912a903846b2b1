/**
 * Points where the scheduling layer joins a conversation turn without the engine depending on it.
 * Hooks that receive `tx` run inside the same transaction as the engine's own write, so a participant's reply and
 * the cancellation of their reminder commit together.
 */
import type { Store, StoreRepositories } from '../store/store.ts';

export interface ParticipantMessageEvent {
  participantId: string;
  /** When the message was received. */
  at: Date;
  sourceMessageId: string | undefined;
}

export interface TurnHooks {
  /** A real participant message was recorded (never called for synthetic hints). */
  onParticipantMessage?(tx: StoreRepositories, event: ParticipantMessageEvent): Promise<void>;
  /** `generate_habit_prompt` delivered a prompt inside the conversation (delivery_mode `immediate`). */
  onImmediatePrompt?(tx: Store, event: { participantId: string; at: Date }): Promise<void>;
  /** A FEEDBACK turn finished: pending feedback timers are cancelled (specification §The turn, step 6). */
  onFeedbackTurn?(tx: StoreRepositories, event: { participantId: string; at: Date }): Promise<void>;
}
