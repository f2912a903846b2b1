/**
 * The channel port: how messages reach participants and come back.
 *
 * Adapters: `webhook/` (generic HTTP gateway), `console/` (terminal), and the fake for tests. Designed for the ones
 * that come next: WhatsApp via Baileys (real polls), the WhatsApp Cloud API (24-hour window, templates), Twilio SMS,
 * a web chat.
 */

export interface OutboundPoll {
  id: string;
  question: string;
  options: string[];
}

/** One message to deliver. `id` is the idempotency key: a channel that accepts one must not deliver twice. */
export interface OutboundMessage {
  id: string;
  participantId: string;
  /** E.164. */
  to: string;
  kind: 'text' | 'poll';
  text: string;
  poll?: OutboundPoll;
}

export interface DeliveryResult {
  providerMessageId?: string;
}

export interface Channel {
  readonly name: string;
  /** False: polls are sent as text with a numbered list, and numeric or exact-text replies become poll answers. */
  readonly supportsPolls: boolean;
  /** Rejects when the message was not delivered (the outbox retries it). */
  send(message: OutboundMessage): Promise<DeliveryResult>;
  /** Starts receiving, where the channel pulls or holds a connection (the webhook channel is pushed to over HTTP). */
  start?(): Promise<void>;
  stop?(): Promise<void>;
}

/** A participant's message as a channel hands it to PromptPipe. */
export interface ChannelInboundMessage {
  channel: string;
  /** E.164 sender. */
  from: string;
  text: string;
  providerMessageId?: string;
  timestamp?: Date;
  pollAnswer?: { pollId?: string; question?: string; option: string };
}
