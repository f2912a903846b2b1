/**
 * The channels' part of the storage port (`../store.ts`), besides whatsapp-web's (`whatsapp-auth.ts`): delivery
 * receipts, the web chat's private links, and the telegram channel's start codes, chats and sent messages.
 */

// ---------------------------------------------------------------------------------------------------------------
// Deliveries (append-only receipts of outbound messages)

/** One fact about an outbound message: sent (with the provider's id), delivered, read, failed… */
export interface NewDeliveryRecord {
  outboundId: string;
  participantId?: string;
  channel: string;
  providerMessageId?: string;
  /** One of `DELIVERY_STATUSES` (channels/channel.ts). */
  status: string;
  errorCode?: string;
  errorMessage?: string;
  createdAt: Date;
}

export interface DeliveryRecord extends NewDeliveryRecord {
  id: number;
}

export interface DeliveryRepository {
  record(delivery: NewDeliveryRecord): Promise<DeliveryRecord>;
  /** The newest record of each of these outbound ids (ids without any are absent). */
  latest(outboundIds: readonly string[]): Promise<Map<string, DeliveryRecord>>;
  /** Every record of one outbound message, oldest first. */
  listFor(outboundId: string): Promise<DeliveryRecord[]>;
  /** The outbound message a provider id belongs to: the record that carried it, or undefined. */
  findByProviderId(channel: string, providerMessageId: string): Promise<DeliveryRecord | undefined>;
}

// ---------------------------------------------------------------------------------------------------------------
// Web-chat tokens (the private `/chat/<token>` links)

export interface WebChatToken {
  token: string;
  participantId: string;
  createdAt: Date;
  revokedAt: Date | undefined;
}

export interface WebChatTokenRepository {
  /** Revokes the participant's active tokens and stores `token` as the active one, in one transaction. */
  issue(participantId: string, token: string, now: Date): Promise<WebChatToken>;
  /** The participant's token that is not revoked, if any. */
  getActive(participantId: string): Promise<WebChatToken | undefined>;
  /** The token row, revoked or not (the caller checks `revokedAt`). */
  find(token: string): Promise<WebChatToken | undefined>;
  /** Revokes every active token of the participant; returns how many. */
  revokeAll(participantId: string, now: Date): Promise<number>;
}

// ---------------------------------------------------------------------------------------------------------------
// The telegram channel: one-time start codes, which chat is whose, and what was sent (native polls with their ids)

export interface TelegramStartCode {
  /** SHA-256 (hex) of the code: the code itself is only ever in the link. */
  codeHash: string;
  participantId: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface TelegramSentMessage {
  outboundId: string;
  participantId: string;
  chatId: string;
  /** Telegram's message id (unique within its chat). */
  messageId: string;
  /** A native poll: Telegram's poll id, and the question and options as sent (`poll_answer` names option indexes). */
  poll?: { pollId: string; question: string; options: string[] };
  createdAt: Date;
}

export interface TelegramRepository {
  /** Stores a new code; the participant's used or expired codes are deleted with it. */
  issueStartCode(code: TelegramStartCode, now: Date): Promise<void>;
  /**
   * Uses a code up: the participant it was issued for, if it is unused and unexpired (once: a second use finds
   * nothing); every other unused code of that participant is used up with it. Undefined for any other code.
   */
  useStartCode(codeHash: string, now: Date): Promise<string | undefined>;
  /** Binds the chat to the participant, replacing the participant's previous chat and the chat's previous owner. */
  linkChat(participantId: string, chatId: string, now: Date): Promise<void>;
  chatOf(participantId: string): Promise<string | undefined>;
  participantOfChat(chatId: string): Promise<string | undefined>;
  recordSent(message: TelegramSentMessage): Promise<void>;
  sentByOutboundId(outboundId: string): Promise<TelegramSentMessage | undefined>;
  /** The poll message of a Telegram poll id. */
  sentPoll(pollId: string): Promise<TelegramSentMessage | undefined>;
}

// ---------------------------------------------------------------------------------------------------------------
// The channels' repositories

export interface ChannelRepositories {
  readonly deliveries: DeliveryRepository;
  readonly webChatTokens: WebChatTokenRepository;
  readonly telegram: TelegramRepository;
}
