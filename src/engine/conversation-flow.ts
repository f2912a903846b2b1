/**
 * The entry points of a conversation turn (§2.2 steps 3–6). Implemented by `createConversationFlow` in
 * `conversation-flow-service.ts`. Each call takes the participant lock itself: callers must not hold it.
 */
import type { ConversationState } from '../domain/conversation-state.ts';
import type { PollAnswer } from '../domain/polls.ts';

export interface IncomingMessage {
  participantId: string;
  text: string;
  /** A structured poll answer from the channel ("Done", "Increase", …). */
  pollAnswer?: PollAnswer;
  /** The durable inbound message id: every side effect of the turn is linked to it. */
  sourceMessageId?: string;
  receivedAt: Date;
  /**
   * Processed again after a crash (it was recorded but never marked processed): the flow looks for what the earlier
   * attempt committed under `sourceMessageId` and neither records the message twice nor answers it twice.
   */
  recovered?: boolean;
}

export interface TurnResult {
  /** The reply, already sent through the messenger. */
  reply: string;
  module: ConversationState;
  toolsCalled: string[];
}

export interface ConversationFlow {
  /** Processes one participant message and sends the reply. */
  handleMessage(message: IncomingMessage): Promise<TurnResult>;
  /** The enrollment greeting: a turn driven by a synthetic hint that is never stored as a participant message. */
  greet(participantId: string): Promise<TurnResult>;
}
