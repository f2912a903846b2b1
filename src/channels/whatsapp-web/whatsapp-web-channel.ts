/**
 * The `whatsapp-web` channel: PromptPipe as a linked device of the study's WhatsApp account (the WhatsApp Web
 * protocol, through Baileys behind `whatsapp-socket.ts`).
 *
 * Outbound: text, and polls as real single-choice WhatsApp polls whose secret is stored (`whatsapp_messages`) so
 * votes can be decrypted later, by any instance, after any restart. A delivery retried after a crash between sending
 * and recording may be sent twice (WhatsApp has no idempotency key); one already recorded is never sent again.
 * While not connected, `send` throws `WhatsAppNotConnectedError`, which the delivery hold turns into a wait that
 * does not count as a failed attempt, in the job's own row, woken as soon as the connection opens (`delivery-hold.ts`).
 *
 * Inbound: one-to-one chats only; text and captions; other media as a bracketed note; poll votes decrypted into the
 * structured poll answer. Senders addressed by LID are mapped back to their phone number (the message's alternate
 * jid, else the LID mapping Baileys keeps with the keys). Duplicates are dropped by the inbound pipeline (provider
 * message id). Typing presence is shown from the moment a message is accepted until the reply is sent.
 *
 * Receipts: delivered / read become `message-delivered` / `message-read` events of the participant, with the
 * outbound id.
 */
import { randomBytes } from 'node:crypto';
import { AppError, errorMessage } from '../../domain/errors.ts';
import type { Log } from '../../observability/log.ts';
import type { Clock } from '../../scheduling/clock.ts';
import type { Store, WhatsAppSentMessage } from '../../store/store.ts';
import type { Channel, ChannelInboundMessage, DeliveryResult, OutboundMessage } from '../channel.ts';
import type { DeliveryReceipts } from '../delivery-receipts.ts';
import type { InboundService } from '../inbound-service.ts';
import type { ConnectionLease } from './connection-lease.ts';
import {
  type ConnectionSupervisor,
  createConnectionSupervisor,
  WhatsAppConnectionState,
} from './connection-supervisor.ts';
import { readLidMapping, writeLidMapping } from './database-auth-state.ts';
import { describeContent, unwrapContent } from './inbound-content.ts';
import { selectedOptionNames } from './poll-option-hash.ts';
import { isDirectChat, isLid, jidToPhone, phoneToJid, userJid } from './whatsapp-jid.ts';
import type { WhatsAppMessage, WhatsAppMessageKey, WhatsAppSocket, WhatsAppSocketFactory } from './whatsapp-socket.ts';

export const WHATSAPP_WEB_CHANNEL = 'whatsapp-web';
export const DEFAULT_WHATSAPP_SESSION = 'default';

/** Thrown by `send` while there is no open connection: the message must wait, not fail. */
export class WhatsAppNotConnectedError extends AppError {
  /** How long the delivery waits at most before trying again. */
  readonly deliveryHoldMs: number;
  /** The connection opening wakes it before that. */
  readonly wakeOn = WHATSAPP_WEB_CHANNEL;

  constructor(state: WhatsAppConnectionState, holdMs: number) {
    super('unavailable', `whatsapp-web is not connected (${state}); the message waits until it is`);
    this.deliveryHoldMs = holdMs;
  }
}

export interface WhatsAppWebChannel extends Channel {
  /** Where inbound messages go (the inbound pipeline is built after the channel). */
  attachInbound(receiver: Pick<InboundService, 'receive'>): void;
  /** Where delivered / read receipts go (the deliveries log, matched by WhatsApp's message id). */
  attachReceipts(receipts: Pick<DeliveryReceipts, 'receive'>): void;
  connectionState(): WhatsAppConnectionState;
  /** How long a delivery should wait at most, while not connected (woken when it opens); undefined when connected. */
  deliveryHold(): { deliveryHoldMs: number; wakeOn: string } | undefined;
  /** Calls `listener` each time the connection opens (the application wakes the held deliveries). */
  onConnected(listener: () => void): void;
  /** Resolves when every inbound event received so far has been handled (tests). */
  idle(): Promise<void>;
}

export interface WhatsAppWebChannelOptions {
  store: Store;
  clock: Clock;
  log: Log;
  socketFactory: WhatsAppSocketFactory;
  lease: ConnectionLease;
  session?: string;
  /**
   * How long a message waits while the connection is being made, or held by another instance (which may be the one
   * to send it), before it is tried again. Default 30 s.
   */
  deliveryHoldMs?: number;
  /**
   * How long a message waits while no device is linked (or it was logged out) before it is looked at again. Default
   * 15 min: linking opens the connection, which wakes every held message at once; this is only the safety net.
   */
  unlinkedHoldMs?: number;
  /** Typing is shown at most this long without a reply. Default 60 s. */
  typingTimeoutMs?: number;
  backoff?: (attempt: number) => number;
  pollMs?: number;
}

/** WhatsApp's message status codes (`proto.WebMessageInfo.Status`). */
const ReceiptStatus = { DELIVERED: 3, READ: 4, PLAYED: 5 } as const;

export function createWhatsAppWebChannel(options: WhatsAppWebChannelOptions): WhatsAppWebChannel {
  const { store, clock, log } = options;
  const session = options.session ?? DEFAULT_WHATSAPP_SESSION;
  const deliveryHoldMs = options.deliveryHoldMs ?? 30_000;
  const unlinkedHoldMs = options.unlinkedHoldMs ?? 15 * 60_000;
  const connectedListeners = new Set<() => void>();
  const typingTimeoutMs = options.typingTimeoutMs ?? 60_000;
  let receiver: Pick<InboundService, 'receive'> | undefined;
  let receipts: Pick<DeliveryReceipts, 'receive'> | undefined;
  const typing = new Map<string, NodeJS.Timeout>();
  // Inbound events are handled one at a time, in arrival order (a text and the vote after it stay in order).
  let inboundQueue = Promise.resolve();

  const supervisor: ConnectionSupervisor = createConnectionSupervisor({
    auth: store.whatsappAuth,
    events: store.events,
    session,
    clock,
    socketFactory: options.socketFactory,
    lease: options.lease,
    log,
    onSocket: attachListeners,
    ...(options.backoff ? { backoff: options.backoff } : {}),
    ...(options.pollMs ? { pollMs: options.pollMs } : {}),
  });
  supervisor.onStateChange(() => {
    if (supervisor.state() === WhatsAppConnectionState.OPEN) for (const listener of connectedListeners) listener();
  });

  /** How long a message waits in the current state: long while a person has to link the device, else short. */
  function holdMs(): number {
    const state = supervisor.state();
    return state === WhatsAppConnectionState.NOT_LINKED || state === WhatsAppConnectionState.LOGGED_OUT
      ? unlinkedHoldMs
      : deliveryHoldMs;
  }

  function enqueueInbound(work: () => Promise<void>): void {
    inboundQueue = inboundQueue.then(work).catch((error: unknown) => {
      log.error({ channel: WHATSAPP_WEB_CHANNEL, error: errorMessage(error) }, 'whatsapp-web: inbound handling failed');
    });
  }

  function attachListeners(socket: WhatsAppSocket): void {
    socket.ev.on('messages.upsert', ({ messages, type }) => {
      if (type !== 'notify') return;
      for (const message of messages) enqueueInbound(() => handleIncoming(socket, message));
    });
    socket.ev.on('messages.update', (updates) => {
      for (const { key, update } of updates) {
        if (typeof update.status === 'number' && key.id) {
          const id = key.id;
          const status = update.status;
          enqueueInbound(() => handleReceipt(id, status));
        }
      }
    });
    socket.ev.on('lid-mapping.update', ({ lid, pn }) => {
      const lidUser = userJid(lid).split('@')[0];
      const pnUser = userJid(pn).split('@')[0];
      if (!lidUser || !pnUser) return;
      enqueueInbound(() => writeLidMapping(store.whatsappAuth, session, { lidUser, pnUser }, clock.now()));
    });
  }

  async function handleReceipt(providerMessageId: string, reportedStatus: number): Promise<void> {
    if (reportedStatus < ReceiptStatus.DELIVERED) return;
    const sent = await store.whatsappMessages.get(providerMessageId);
    if (!sent) return;
    const status = reportedStatus >= ReceiptStatus.READ ? 'read' : 'delivered';
    await receipts?.receive({ channel: WHATSAPP_WEB_CHANNEL, providerMessageId, status, at: clock.now() });
    await store.events.record({
      participantId: sent.participantId,
      type: status === 'delivered' ? 'message-delivered' : 'message-read',
      data: { channel: WHATSAPP_WEB_CHANNEL, outbound_id: sent.outboundId, provider_message_id: providerMessageId },
      createdAt: clock.now(),
    });
  }

  /** The sender's E.164 number: directly, from the alternate jid, or through the stored LID mapping. */
  async function resolvePhone(key: WhatsAppMessageKey): Promise<string | undefined> {
    for (const jid of [key.remoteJid, key.remoteJidAlt]) {
      const phone = jidToPhone(jid);
      if (phone) return phone;
    }
    for (const jid of [key.remoteJid, key.remoteJidAlt]) {
      if (!jid || !isLid(jid)) continue;
      const lidUser = userJid(jid).split('@')[0] ?? '';
      const pnUser = await readLidMapping(store.whatsappAuth, session, lidUser);
      if (pnUser) return `+${pnUser}`;
    }
    return undefined;
  }

  async function handleIncoming(socket: WhatsAppSocket, message: WhatsAppMessage): Promise<void> {
    const { key } = message;
    if (key.fromMe || !key.id || !isDirectChat(key.remoteJid)) return;
    const content = describeContent(unwrapContent(message.message));
    if (content.kind === 'ignored') {
      log.debug({ providerMessageId: key.id, reason: content.reason }, 'whatsapp-web: message ignored');
      return;
    }
    const phone = await resolvePhone(key);
    if (!phone) {
      log.warn(
        { providerMessageId: key.id, remoteJid: key.remoteJid },
        'whatsapp-web: cannot map the sender (LID without a known phone number); message ignored',
      );
      await store.events.record({
        type: 'whatsapp-sender-unresolved',
        data: { provider_message_id: key.id, remote_jid: key.remoteJid ?? null },
        createdAt: clock.now(),
      });
      return;
    }
    const timestamp = messageTime(message);
    if (content.kind === 'poll-vote') {
      const answer = await decryptVote(socket, message, phone);
      if (!answer) return;
      await deliverInbound(socket, key, {
        channel: WHATSAPP_WEB_CHANNEL,
        from: phone,
        text: '',
        providerMessageId: key.id,
        ...(timestamp ? { timestamp } : {}),
        pollAnswer: answer,
      });
      return;
    }
    await deliverInbound(socket, key, {
      channel: WHATSAPP_WEB_CHANNEL,
      from: phone,
      text: content.text,
      providerMessageId: key.id,
      ...(timestamp ? { timestamp } : {}),
    });
  }

  async function deliverInbound(
    socket: WhatsAppSocket,
    key: WhatsAppMessageKey,
    message: ChannelInboundMessage,
  ): Promise<void> {
    if (!receiver) {
      log.error({ providerMessageId: key.id }, 'whatsapp-web: no inbound pipeline attached; message dropped');
      return;
    }
    try {
      const receipt = await receiver.receive(message);
      if (!receipt.duplicate && key.remoteJid) startTyping(socket, key.remoteJid);
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') {
        log.info({ from: message.from, providerMessageId: key.id }, 'whatsapp-web: message from a number not enrolled');
        return;
      }
      throw error;
    }
  }

  /** The structured answer of a vote, or undefined (recorded) when its poll is unknown or it cannot be decrypted. */
  async function decryptVote(
    socket: WhatsAppSocket,
    message: WhatsAppMessage,
    phone: string,
  ): Promise<ChannelInboundMessage['pollAnswer']> {
    const update = unwrapContent(message.message)?.pollUpdateMessage;
    const pollMessageId = update?.pollCreationMessageKey?.id ?? undefined;
    const vote = update?.vote;
    const poll = pollMessageId ? await store.whatsappMessages.get(pollMessageId) : undefined;
    if (!poll?.poll || !vote?.encPayload || !vote.encIv) {
      await recordIgnoredVote(message, phone, poll ? 'vote without payload' : 'unknown poll', pollMessageId);
      return undefined;
    }
    const hashes = tryDecrypt(socket, message.key, poll, { encPayload: vote.encPayload, encIv: vote.encIv });
    if (!hashes) {
      await recordIgnoredVote(message, phone, 'vote could not be decrypted', pollMessageId, poll.participantId);
      return undefined;
    }
    const [option] = selectedOptionNames(hashes, poll.poll.options);
    if (option === undefined) {
      // An empty vote is a withdrawn one; there is nothing to answer.
      log.info({ pollMessageId, from: phone }, 'whatsapp-web: poll vote withdrawn');
      return undefined;
    }
    return { pollId: poll.outboundId, question: poll.poll.question, option };
  }

  /**
   * WhatsApp encrypts a vote for the jids as the voter's phone addressed them: phone-number jids, or LIDs in chats
   * that moved to LID addressing. Every plausible pair is tried; AES-GCM's tag rejects the wrong ones.
   */
  function tryDecrypt(
    socket: WhatsAppSocket,
    key: WhatsAppMessageKey,
    poll: WhatsAppSentMessage,
    vote: { encPayload: Uint8Array; encIv: Uint8Array },
  ): Uint8Array[] | undefined {
    const unique = (values: (string | null | undefined)[]) => [
      ...new Set(values.filter((value): value is string => Boolean(value)).map(userJid)),
    ];
    const creators = unique([socket.user?.id, socket.user?.lid]);
    const voters = unique([key.participant, key.participantAlt, key.remoteJid, key.remoteJidAlt, poll.remoteJid]);
    const messageSecret = Buffer.from(poll.poll?.secret ?? '', 'base64');
    for (const pollCreatorJid of creators) {
      for (const voterJid of voters) {
        try {
          return socket.decryptPollVote(vote, {
            pollMessageId: poll.providerMessageId,
            pollCreatorJid,
            voterJid,
            messageSecret,
          });
        } catch {
          // Not this pair.
        }
      }
    }
    return undefined;
  }

  async function recordIgnoredVote(
    message: WhatsAppMessage,
    phone: string,
    reason: string,
    pollMessageId: string | undefined,
    participantId?: string,
  ): Promise<void> {
    log.warn(
      { providerMessageId: message.key.id, pollMessageId, from: phone, reason },
      'whatsapp-web: poll vote ignored',
    );
    await store.events.record({
      ...(participantId ? { participantId } : {}),
      type: 'poll-vote-ignored',
      data: {
        channel: WHATSAPP_WEB_CHANNEL,
        reason,
        from: phone,
        provider_message_id: message.key.id ?? null,
        poll_message_id: pollMessageId ?? null,
      },
      createdAt: clock.now(),
    });
  }

  function startTyping(socket: WhatsAppSocket, jid: string): void {
    stopTyping(jid);
    void socket.sendPresenceUpdate('composing', jid).catch(() => undefined);
    typing.set(
      jid,
      setTimeout(() => {
        typing.delete(jid);
        void supervisor
          .openSocket()
          ?.sendPresenceUpdate('paused', jid)
          .catch(() => undefined);
      }, typingTimeoutMs),
    );
  }

  function stopTyping(jid: string): void {
    clearTimeout(typing.get(jid));
    typing.delete(jid);
  }

  return {
    name: WHATSAPP_WEB_CHANNEL,
    supportsPolls: true,
    async send(message: OutboundMessage): Promise<DeliveryResult> {
      const alreadySent = await store.whatsappMessages.getByOutboundId(message.id);
      if (alreadySent) return { providerMessageId: alreadySent.providerMessageId };
      const socket = supervisor.openSocket();
      if (!socket) throw new WhatsAppNotConnectedError(supervisor.state(), holdMs());
      const jid = phoneToJid(message.to);
      const poll = message.kind === 'poll' ? message.poll : undefined;
      const messageSecret = poll ? randomBytes(32) : undefined;
      let sent: WhatsAppMessage | undefined;
      try {
        sent =
          poll && messageSecret
            ? await socket.sendMessage(jid, {
                poll: { name: poll.question, values: [...poll.options], selectableCount: 1, messageSecret },
              })
            : await socket.sendMessage(jid, { text: message.text });
      } catch (error) {
        throw new AppError('channel_error', `whatsapp-web could not send to ${message.to}: ${errorMessage(error)}`, {
          cause: error,
        });
      }
      const providerMessageId = sent?.key.id;
      if (!providerMessageId) throw new AppError('channel_error', 'whatsapp-web: WhatsApp returned no message id');
      stopTyping(jid);
      await store.whatsappMessages.record({
        providerMessageId,
        session,
        outboundId: message.id,
        participantId: message.participantId,
        remoteJid: jid,
        kind: poll ? 'poll' : 'text',
        ...(poll && messageSecret
          ? { poll: { question: poll.question, options: [...poll.options], secret: messageSecret.toString('base64') } }
          : {}),
        createdAt: clock.now(),
      });
      return { providerMessageId };
    },
    async start() {
      supervisor.start();
    },
    async stop() {
      for (const jid of [...typing.keys()]) stopTyping(jid);
      await supervisor.stop();
      await inboundQueue;
    },
    attachInbound(inbound) {
      receiver = inbound;
    },
    attachReceipts(target) {
      receipts = target;
    },
    connectionState: () => supervisor.state(),
    deliveryHold: () =>
      supervisor.openSocket() ? undefined : { deliveryHoldMs: holdMs(), wakeOn: WHATSAPP_WEB_CHANNEL },
    onConnected(listener) {
      connectedListeners.add(listener);
    },
    async idle() {
      let current: Promise<void>;
      do {
        current = inboundQueue;
        await current;
      } while (current !== inboundQueue);
    },
  };
}

function messageTime(message: WhatsAppMessage): Date | undefined {
  const value = message.messageTimestamp;
  if (value === null || value === undefined) return undefined;
  const seconds = typeof value === 'number' ? value : value.toNumber();
  return Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000) : undefined;
}
