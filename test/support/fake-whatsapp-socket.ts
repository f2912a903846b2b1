/**
 * A fake WhatsApp for tests: a socket factory whose sockets emit Baileys-shaped events and record what is sent,
 * plus a phone on the other side (link by QR or pairing code, send text, media and encrypted poll votes, deliver
 * receipts, drop the connection, log the device out). One `FakeWhatsApp` outlives its sockets, like the real service
 * outlives reconnections.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { decryptBaileysPollVote } from '../../src/channels/whatsapp-web/baileys-socket.ts';
import type { WhatsAppAuthState } from '../../src/channels/whatsapp-web/database-auth-state.ts';
import { phoneToJid, userJid } from '../../src/channels/whatsapp-web/whatsapp-jid.ts';
import {
  DisconnectReason,
  type PollVoteContext,
  type WhatsAppMessage,
  type WhatsAppMessageContent,
  type WhatsAppOutgoingContent,
  type WhatsAppSocket,
  type WhatsAppSocketEvent,
  type WhatsAppSocketEvents,
  type WhatsAppSocketFactory,
} from '../../src/channels/whatsapp-web/whatsapp-socket.ts';
import { encryptPollVote } from './poll-vote-encryption.ts';

export interface FakeSentMessage {
  id: string;
  jid: string;
  content: WhatsAppOutgoingContent;
}

export interface FakeWhatsAppOptions {
  /** Our account's number once linked. */
  accountPhone?: string;
  /** Our account's LID user. */
  accountLid?: string;
  /** Told about every message sent (the out-of-process test module writes them to a file). */
  onSent?: (message: FakeSentMessage) => void;
  /** Told about every QR code shown (a test can `link()` from here, like a phone scanning it). */
  onQr?: (qr: string) => void;
}

function disconnect(statusCode: number, message: string): Error {
  return Object.assign(new Error(message), { output: { statusCode } });
}

export class FakeWhatsAppSocket implements WhatsAppSocket {
  readonly emitter = new EventEmitter();
  readonly ev = {
    on: <E extends WhatsAppSocketEvent>(event: E, listener: (data: WhatsAppSocketEvents[E]) => void): void => {
      this.emitter.on(event, listener);
    },
  };
  open = false;
  closed = false;
  private readonly whatsapp: FakeWhatsApp;
  readonly auth: WhatsAppAuthState;

  constructor(whatsapp: FakeWhatsApp, auth: WhatsAppAuthState) {
    this.whatsapp = whatsapp;
    this.auth = auth;
  }

  get user(): { id: string; lid?: string | undefined } | undefined {
    const me = this.auth.creds.me;
    return me ? { id: me.id, lid: me.lid } : undefined;
  }

  emit<E extends WhatsAppSocketEvent>(event: E, data: WhatsAppSocketEvents[E]): void {
    this.emitter.emit(event, data);
  }

  /** What Baileys does on connecting: open with linked credentials, else offer a QR code. */
  connect(): void {
    if (this.whatsapp.refuseConnections) {
      this.close(disconnect(408, 'Connection Failure'));
      return;
    }
    this.emit('connection.update', { connection: 'connecting' });
    if (this.auth.creds.me?.id) {
      this.open = true;
      this.emit('connection.update', { connection: 'open' });
    } else {
      const qr = `fake-qr-${this.whatsapp.qrCount++}`;
      this.emit('connection.update', { qr });
      this.whatsapp.options.onQr?.(qr);
    }
  }

  close(error: Error): void {
    if (this.closed) return;
    this.open = false;
    this.closed = true;
    this.emit('connection.update', { connection: 'close', lastDisconnect: { error, date: new Date() } });
  }

  async sendMessage(jid: string, content: WhatsAppOutgoingContent): Promise<WhatsAppMessage | undefined> {
    if (!this.open) throw disconnect(428, 'Connection Closed');
    if (this.whatsapp.failNextSend) {
      this.whatsapp.failNextSend = false;
      throw new Error('fake send failure');
    }
    const id = `3EB0${randomBytes(8).toString('hex').toUpperCase()}`;
    this.whatsapp.sent.push({ id, jid, content });
    this.whatsapp.options.onSent?.({ id, jid, content });
    const message: WhatsAppMessageContent =
      'text' in content ? { conversation: content.text } : { conversation: content.poll.name };
    return { key: { remoteJid: jid, fromMe: true, id }, message };
  }

  async sendPresenceUpdate(type: 'composing' | 'paused' | 'available', jid?: string): Promise<void> {
    this.whatsapp.presences.push({ type, ...(jid ? { jid } : {}) });
  }

  async requestPairingCode(phoneNumber: string): Promise<string> {
    this.whatsapp.pairingRequests.push(phoneNumber);
    return 'FAKE1234';
  }

  async logout(): Promise<void> {
    this.whatsapp.loggedOut = true;
    this.close(disconnect(DisconnectReason.LOGGED_OUT, 'Intentional Logout'));
  }

  end(error?: Error): void {
    this.close(error ?? disconnect(428, 'Connection Closed'));
  }

  /** As the real socket does it: with Baileys' decryption, so the fake's votes prove the channel reads real ones. */
  decryptPollVote(vote: { encPayload: Uint8Array; encIv: Uint8Array }, context: PollVoteContext): Uint8Array[] {
    return decryptBaileysPollVote(vote, context);
  }
}

export class FakeWhatsApp {
  readonly sent: FakeSentMessage[] = [];
  readonly presences: { type: string; jid?: string }[] = [];
  readonly pairingRequests: string[] = [];
  readonly sockets: FakeWhatsAppSocket[] = [];
  readonly accountPhone: string;
  readonly accountLid: string;
  qrCount = 1;
  loggedOut = false;
  refuseConnections = false;
  failNextSend = false;
  private messageCounter = 0;
  readonly options: FakeWhatsAppOptions;

  constructor(options: FakeWhatsAppOptions = {}) {
    this.options = options;
    this.accountPhone = options.accountPhone ?? '+15550009999';
    this.accountLid = options.accountLid ?? '98765432101234';
  }

  /** The socket factory to hand to the channel or the linking command. */
  readonly factory: WhatsAppSocketFactory = ({ auth }) => {
    const socket = new FakeWhatsAppSocket(this, auth);
    this.sockets.push(socket);
    // Like Baileys, the connection starts on its own, after the caller had a chance to attach listeners.
    setImmediate(() => socket.connect());
    return socket;
  };

  get current(): FakeWhatsAppSocket | undefined {
    return this.sockets.at(-1);
  }

  private requireOpen(): FakeWhatsAppSocket {
    const socket = this.current;
    if (!socket?.open) throw new Error('the fake WhatsApp has no open connection');
    return socket;
  }

  /** The phone scans the QR code (or confirms the pairing code): credentials are issued, then WhatsApp asks for a restart. */
  link(): void {
    const socket = this.current;
    if (!socket || socket.closed) throw new Error('no connection waiting to be linked');
    const user = this.accountPhone.replace(/^\+/, '');
    socket.auth.creds.me = { id: `${user}:7@s.whatsapp.net`, lid: `${this.accountLid}:7@lid`, name: 'Study' };
    socket.auth.creds.registered = true;
    socket.emit('creds.update', { me: socket.auth.creds.me, registered: true });
    socket.close(disconnect(DisconnectReason.RESTART_REQUIRED, 'Stream Errored (restart required)'));
  }

  /** Drops the open connection (network loss). */
  drop(statusCode = 408): void {
    this.current?.close(disconnect(statusCode, 'Connection Lost'));
  }

  /** The device was removed on the phone. */
  logOutFromPhone(): void {
    this.loggedOut = true;
    this.current?.close(disconnect(DisconnectReason.LOGGED_OUT, 'Connection Failure'));
  }

  nextMessageId(): string {
    this.messageCounter += 1;
    return `FAKEIN${String(this.messageCounter).padStart(6, '0')}`;
  }

  /** A participant's message arriving. `from` is a jid; `alt` its other addressing form (LID chats carry both). */
  receive(options: {
    from: string;
    alt?: string;
    message: WhatsAppMessageContent;
    id?: string;
    fromMe?: boolean;
  }): string {
    const id = options.id ?? this.nextMessageId();
    this.requireOpen().emit('messages.upsert', {
      type: 'notify',
      messages: [
        {
          key: {
            remoteJid: options.from,
            ...(options.alt ? { remoteJidAlt: options.alt } : {}),
            fromMe: options.fromMe ?? false,
            id,
          },
          message: options.message,
          messageTimestamp: Math.floor(Date.now() / 1000),
        },
      ],
    });
    return id;
  }

  receiveText(fromPhone: string, text: string, id?: string): string {
    return this.receive({ from: phoneToJid(fromPhone), message: { conversation: text }, ...(id ? { id } : {}) });
  }

  /** The last poll sent to this jid (or with this id). */
  findPoll(match: { jid?: string; id?: string; question?: string }): FakeSentMessage & {
    content: Extract<WhatsAppOutgoingContent, { poll: unknown }>;
  } {
    const poll = this.sent.findLast(
      (sent) =>
        'poll' in sent.content &&
        (match.jid === undefined || sent.jid === match.jid) &&
        (match.id === undefined || sent.id === match.id) &&
        (match.question === undefined || sent.content.poll.name === match.question),
    );
    if (!poll || !('poll' in poll.content)) throw new Error(`no poll was sent matching ${JSON.stringify(match)}`);
    return poll as FakeSentMessage & { content: Extract<WhatsAppOutgoingContent, { poll: unknown }> };
  }

  /**
   * A vote as the voter's phone sends it: encrypted for (poll id, our jid, voter jid) with the poll's secret.
   * `voterJid` is how the voter is addressed (a LID for LID chats; then pass the phone-number jid as `alt`).
   */
  vote(options: {
    pollId: string;
    voterJid: string;
    alt?: string;
    options: string[];
    creatorJid?: string;
    id?: string;
  }): string {
    const poll = this.findPoll({ id: options.pollId });
    const creatorJid = options.creatorJid ?? userJid(phoneToJid(this.accountPhone));
    const vote = encryptPollVote(options.options, {
      pollMessageId: poll.id,
      pollCreatorJid: creatorJid,
      voterJid: options.voterJid,
      messageSecret: poll.content.poll.messageSecret,
    });
    return this.receive({
      from: options.voterJid,
      ...(options.alt ? { alt: options.alt } : {}),
      ...(options.id ? { id: options.id } : {}),
      message: {
        pollUpdateMessage: {
          pollCreationMessageKey: { remoteJid: options.voterJid, fromMe: true, id: poll.id },
          vote,
        },
      },
    });
  }

  /** Delivery receipts: 3 delivered, 4 read. */
  receipt(messageId: string, status: number): void {
    const sent = this.sent.find((message) => message.id === messageId);
    this.requireOpen().emit('messages.update', [
      { key: { remoteJid: sent?.jid ?? null, fromMe: true, id: messageId }, update: { status } },
    ]);
  }

  announceLid(lidUser: string, phone: string): void {
    this.requireOpen().emit('lid-mapping.update', { lid: `${lidUser}@lid`, pn: phoneToJid(phone) });
  }
}
