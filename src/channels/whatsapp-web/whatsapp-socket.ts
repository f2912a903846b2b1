/**
 * The socket port: the narrow part of a Baileys socket the `whatsapp-web` channel uses. Event payloads keep Baileys'
 * shapes (so the Baileys adapter passes them through untouched and the fake emits the same objects), reduced to the
 * fields read here.
 *
 * Adapters: `baileys-socket.ts` (the real WhatsApp Web connection) and `test/support/fake-whatsapp-socket.ts` (tests: emits
 * Baileys-shaped events and records what is sent).
 */
import type { Log } from '../../domain/log.ts';
import type { WhatsAppAuthState } from './database-auth-state.ts';

export interface WhatsAppMessageKey {
  remoteJid?: string | null;
  /** The other addressing form of `remoteJid` (the phone-number jid when `remoteJid` is a LID, and vice versa). */
  remoteJidAlt?: string | null;
  fromMe?: boolean | null;
  id?: string | null;
  participant?: string | null;
  participantAlt?: string | null;
}

interface MediaWithCaption {
  caption?: string | null;
}

/** The content of a message (`proto.IMessage`), reduced to what the channel reads. */
export interface WhatsAppMessageContent {
  conversation?: string | null;
  extendedTextMessage?: { text?: string | null } | null;
  imageMessage?: MediaWithCaption | null;
  videoMessage?: MediaWithCaption | null;
  documentMessage?: (MediaWithCaption & { fileName?: string | null }) | null;
  documentWithCaptionMessage?: { message?: WhatsAppMessageContent | null } | null;
  ephemeralMessage?: { message?: WhatsAppMessageContent | null } | null;
  viewOnceMessage?: { message?: WhatsAppMessageContent | null } | null;
  viewOnceMessageV2?: { message?: WhatsAppMessageContent | null } | null;
  audioMessage?: object | null;
  stickerMessage?: object | null;
  contactMessage?: object | null;
  locationMessage?: object | null;
  reactionMessage?: object | null;
  protocolMessage?: object | null;
  pollUpdateMessage?: {
    pollCreationMessageKey?: WhatsAppMessageKey | null;
    vote?: { encPayload?: Uint8Array | null; encIv?: Uint8Array | null } | null;
  } | null;
}

export interface WhatsAppMessage {
  key: WhatsAppMessageKey;
  message?: WhatsAppMessageContent | null;
  /** Seconds since the epoch (a number or a protobuf Long). */
  messageTimestamp?: number | { toNumber(): number } | null;
}

/** A disconnect's cause: Baileys closes with a Boom whose `output.statusCode` is a `DisconnectReason`. */
export interface WhatsAppDisconnectError extends Error {
  output?: { statusCode?: number };
}

export interface WhatsAppSocketEvents {
  'connection.update': {
    connection?: 'open' | 'connecting' | 'close';
    lastDisconnect?: { error?: WhatsAppDisconnectError | Error | undefined; date?: Date } | undefined;
    qr?: string;
    isNewLogin?: boolean;
  };
  /** The credentials changed (linking, key rotation): they must be saved before anything else happens. */
  'creds.update': object;
  'messages.upsert': { messages: WhatsAppMessage[]; type: 'notify' | 'append' };
  /** Status 2 = server ack, 3 = delivered, 4 = read, 5 = played. */
  'messages.update': { key: WhatsAppMessageKey; update: { status?: number | null } }[];
  'lid-mapping.update': { lid: string; pn: string };
}

export type WhatsAppSocketEvent = keyof WhatsAppSocketEvents;

/** What the channel sends: text, or a single-choice poll with its secret chosen by us (so it can be stored first). */
export type WhatsAppOutgoingContent =
  | { text: string }
  | { poll: { name: string; values: string[]; selectableCount: 1; messageSecret: Uint8Array } };

/** Which poll and voter a vote was encrypted for: WhatsApp derives the vote's key from all four. */
export interface PollVoteContext {
  /** The poll creation message's id (`key.id`). */
  pollMessageId: string;
  /** Who sent the poll: our own account's jid ("user@server", no device suffix). */
  pollCreatorJid: string;
  /** Who voted, as their phone addressed the vote. */
  voterJid: string;
  /** The poll creation message's 32-byte `messageContextInfo.messageSecret`. */
  messageSecret: Uint8Array;
}

export interface WhatsAppSocket {
  readonly ev: {
    on<E extends WhatsAppSocketEvent>(event: E, listener: (data: WhatsAppSocketEvents[E]) => void): void;
  };
  /** Our account, once linked (`id` is a phone-number jid with a device suffix; `lid` its LID). */
  readonly user: { id: string; lid?: string | undefined } | undefined;
  /** Resolves with the sent message (its `key.id` is WhatsApp's message id). */
  sendMessage(jid: string, content: WhatsAppOutgoingContent): Promise<WhatsAppMessage | undefined>;
  sendPresenceUpdate(type: 'composing' | 'paused' | 'available', jid?: string): Promise<void>;
  /** Linking by number instead of QR: the 8-character code to type on the phone. */
  requestPairingCode(phoneNumber: string): Promise<string>;
  /** Unlinks this device. */
  logout(): Promise<void>;
  /**
   * The SHA-256 hashes of the option names a poll vote selects. Throws when the vote was not encrypted for this
   * context: AES-GCM's tag rejects a wrong poll, secret or jid, so a wrong guess is never mistaken for a vote.
   */
  decryptPollVote(vote: { encPayload: Uint8Array; encIv: Uint8Array }, context: PollVoteContext): Uint8Array[];
  /** Closes the connection without unlinking. */
  end(error?: Error): void;
}

export interface WhatsAppSocketOptions {
  auth: WhatsAppAuthState;
  /** Pino-compatible; Baileys logs a lot at debug. */
  log: Log;
}

/** Opens a connection with these credentials (it connects by itself; watch `connection.update`). */
export type WhatsAppSocketFactory = (options: WhatsAppSocketOptions) => WhatsAppSocket | Promise<WhatsAppSocket>;

/** Baileys' `DisconnectReason` values the supervisor acts on. */
export const DisconnectReason = {
  LOGGED_OUT: 401,
  FORBIDDEN: 403,
  CONNECTION_REPLACED: 440,
  BAD_SESSION: 500,
  RESTART_REQUIRED: 515,
} as const;

export function disconnectStatusCode(error: unknown): number | undefined {
  const code = (error as WhatsAppDisconnectError | undefined)?.output?.statusCode;
  return typeof code === 'number' ? code : undefined;
}
