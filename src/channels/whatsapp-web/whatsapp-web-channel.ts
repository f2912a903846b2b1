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
import type { Clock } from '../../domain/clock.ts';
import { AppError, errorMessage } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import type { InboundService } from '../../inbound/inbound-port.ts';
import type { Store } from '../../store/store.ts';
import type { Channel, DeliveryResult, OutboundMessage } from '../channel.ts';
import type { DeliveryReceipts } from '../delivery-receipts.ts';
import type { ConnectionLease } from './connection-lease.ts';
import {
  type ConnectionSupervisor,
  createConnectionSupervisor,
  WhatsAppConnectionState,
} from './connection-supervisor.ts';
import { writeLidMapping } from './database-auth-state.ts';
import { createTypingIndicator } from './typing-indicator.ts';
import { phoneToJid, userJid } from './whatsapp-jid.ts';
import type { WhatsAppMessage, WhatsAppSocket, WhatsAppSocketFactory } from './whatsapp-socket.ts';
import { createWhatsAppWebInbound } from './whatsapp-web-inbound.ts';
import { DEFAULT_WHATSAPP_SESSION, WHATSAPP_WEB_CHANNEL } from './whatsapp-web-names.ts';

export { DEFAULT_WHATSAPP_SESSION, WHATSAPP_WEB_CHANNEL };

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

export function createWhatsAppWebChannel(options: WhatsAppWebChannelOptions): WhatsAppWebChannel {
  const { store, clock, log } = options;
  const session = options.session ?? DEFAULT_WHATSAPP_SESSION;
  const deliveryHoldMs = options.deliveryHoldMs ?? 30_000;
  const unlinkedHoldMs = options.unlinkedHoldMs ?? 15 * 60_000;
  const connectedListeners = new Set<() => void>();
  const typingTimeoutMs = options.typingTimeoutMs ?? 60_000;
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
  const typing = createTypingIndicator({ timeoutMs: typingTimeoutMs, openSocket: () => supervisor.openSocket() });
  const inbound = createWhatsAppWebInbound({ store, clock, log, session, typing });
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
      for (const message of messages) enqueueInbound(() => inbound.handleIncoming(socket, message));
    });
    socket.ev.on('messages.update', (updates) => {
      for (const { key, update } of updates) {
        if (typeof update.status === 'number' && key.id) {
          const id = key.id;
          const status = update.status;
          enqueueInbound(() => inbound.handleReceipt(id, status));
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
      typing.stop(jid);
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
      typing.stopAll();
      await supervisor.stop();
      await inboundQueue;
    },
    attachInbound: (receiver) => inbound.attachInbound(receiver),
    attachReceipts: (receipts) => inbound.attachReceipts(receipts),
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
