/**
 * The whatsapp-web channel's part of the storage port (`../store.ts`): the linked device's credentials and Signal keys
 * (Baileys' auth state), and the messages it sent (what decrypting a poll vote needs).
 */

// ---------------------------------------------------------------------------------------------------------------
// The whatsapp-web channel: linked-device credentials and Signal keys, and the messages it sent

/** One stored value of a linked device's auth state; `value: null` deletes it. */
export interface WhatsAppAuthEntry {
  /** `creds`, or a Signal key type (`session`, `pre-key`, `sender-key`, `app-state-sync-key`, …). */
  category: string;
  /** The key's id; `''` for the single `creds` document. */
  keyId: string;
  /** Serialised (Baileys' BufferJSON encoding); the store does not interpret it. */
  value: string | null;
}

export interface WhatsAppAuthRepository {
  /** The stored values of these ids (missing ones are absent from the map). */
  read(session: string, category: string, keyIds: string[]): Promise<Map<string, string>>;
  /** Upserts (or deletes, for `value: null`) every entry atomically. */
  write(session: string, entries: WhatsAppAuthEntry[], now: Date): Promise<void>;
  /** Forgets the session entirely (logout); returns how many values were deleted. */
  clear(session: string): Promise<number>;
}

/** What decrypting a vote needs: the poll as sent and the 32-byte message secret it was encrypted with. */
export interface WhatsAppPollRecord {
  question: string;
  options: string[];
  /** Base64 of the poll creation message's `messageSecret`. */
  secret: string;
}

export interface WhatsAppSentMessage {
  /** WhatsApp's message id (`key.id`). */
  providerMessageId: string;
  session: string;
  outboundId: string;
  participantId: string;
  remoteJid: string;
  kind: 'text' | 'poll';
  poll?: WhatsAppPollRecord;
  createdAt: Date;
}

export interface WhatsAppMessageRepository {
  /** Records a sent message; recording the same provider id again changes nothing. */
  record(message: WhatsAppSentMessage): Promise<void>;
  get(providerMessageId: string): Promise<WhatsAppSentMessage | undefined>;
  /** The message sent for an outbound id (a retried delivery must not send twice). */
  getByOutboundId(outboundId: string): Promise<WhatsAppSentMessage | undefined>;
}

// ---------------------------------------------------------------------------------------------------------------
// The whatsapp-web channel's repositories

export interface WhatsAppRepositories {
  readonly whatsappAuth: WhatsAppAuthRepository;
  readonly whatsappMessages: WhatsAppMessageRepository;
}
