/**
 * The entry points of a conversation turn (specification §The turn). Implemented by `createConversationFlow` in
 * `conversation-flow-service.ts`. Each call takes the participant lock itself: callers must not hold it.
 */
import type { ConversationState } from '../domain/conversation-state.ts';
import { AppError } from '../domain/errors.ts';
import type { PollAnswer } from '../domain/polls.ts';

/** A turn's model call failed after the adapter's retries; nothing was sent (the message is held for a retry). */
export class LlmOutageError extends AppError {
  constructor(message: string) {
    super('unavailable', `LLM unavailable: ${message}`, { details: { kind: 'llm_outage' } });
  }
}

export interface IncomingMessage {
  participantId: string;
  text: string;
  /** A structured poll answer from the channel ("Done", "Increase", …). */
  pollAnswer?: PollAnswer;
  /** The durable inbound message id: every side effect of the turn is linked to it. */
  sourceMessageId?: string;
  /**
   * Whether the transcript already holds this message (an interrupted earlier attempt recorded it), when the caller
   * has just looked it up under the participant's lock; left out, the flow looks it up itself.
   */
  recorded?: boolean;
  receivedAt: Date;
  /**
   * When the model call fails, throw {@link LlmOutageError} (the message stays pending and is retried) instead of
   * answering with the "assistant unavailable" fallback.
   */
  holdOnLlmError?: boolean;
  /**
   * Writes that belong with the reply (the inbound message marked processed), made through the store: run in the
   * unit of work that records the reply, so both commit together, or right after the reply when that unit of work
   * failed and it went alone.
   */
  withReply?: () => Promise<void>;
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
  /**
   * A turn over the stored history, driven by a synthetic hint (never stored), its reply linked to `sourceMessageId`:
   * a turn that was held (safety/held-coach-turn.ts) answers the messages already in the history.
   */
  continueConversation(participantId: string, turn: { hint: string; sourceMessageId: string }): Promise<TurnResult>;
}
