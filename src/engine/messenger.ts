/**
 * How the engine and the scheduler send anything to a participant. An implementation records the message in the
 * transcript (and, for conversational text, nothing else: the working history is the engine's job) and hands it to
 * the durable outbox for delivery over the participant's channel. The fake records what was sent.
 */
import type { TranscriptKind } from '../store/ports/conversation-store.ts';

export interface SendOptions {
  /** `reply`, `proactive`, `poll`, `debug`, `organiser`, `notice`. */
  kind: TranscriptKind;
  /** INTAKE / FEEDBACK / scheduler / api. */
  module?: string;
  sourceMessageId?: string;
  /** The LLM call (provenance record) that produced this message. */
  llmCallId?: number;
  /** The model that produced this message. */
  model?: string;
  /** The delivery job's dedup key, so a caller that may run twice (a broadcast's slot) queues the message once. */
  dedupKey?: string;
}

export interface OutgoingText {
  type: 'text';
  text: string;
}

export interface OutgoingPoll {
  type: 'poll';
  question: string;
  options: string[];
}

export type Outgoing = OutgoingText | OutgoingPoll;

export interface SentMessage {
  /** Outbound id (the channel's idempotency key). */
  id: string;
  participantId: string;
  message: Outgoing;
  options: SendOptions;
}

export interface Messenger {
  /**
   * Records and queues one message. Inside a unit of work (`store.transaction`), the message commits with it, and is
   * neither recorded nor sent if it rolls back.
   */
  send(participantId: string, message: Outgoing, options: SendOptions): Promise<SentMessage>;
}
