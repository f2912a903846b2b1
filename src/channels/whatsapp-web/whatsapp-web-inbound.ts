/**
 * What WhatsApp Web pushes to the linked device: messages from one-to-one chats (text, captions, a bracketed note for
 * other media, poll votes), their senders mapped from LIDs back to phone numbers, and delivered / read receipts. Each
 * accepted message goes to the inbound pipeline, and typing is shown until the reply is sent.
 */

import type { Clock } from '../../domain/clock.ts';
import { AppError } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import type { ChannelInboundMessage, InboundService } from '../../inbound/inbound-port.ts';
import type { Store } from '../../store/store.ts';
import type { DeliveryReceipts } from '../delivery-receipts.ts';
import { readLidMapping } from './database-auth-state.ts';
import { describeContent, unwrapContent } from './inbound-content.ts';
import { createPollVoteReader } from './poll-votes.ts';
import type { TypingIndicator } from './typing-indicator.ts';
import { isDirectChat, isLid, jidToPhone, userJid } from './whatsapp-jid.ts';
import type { WhatsAppMessage, WhatsAppMessageKey, WhatsAppSocket } from './whatsapp-socket.ts';
import { WHATSAPP_WEB_CHANNEL } from './whatsapp-web-names.ts';

/** WhatsApp's message status codes (`proto.WebMessageInfo.Status`). */
const ReceiptStatus = { DELIVERED: 3, READ: 4, PLAYED: 5 } as const;

export function createWhatsAppWebInbound(options: {
  store: Store;
  clock: Clock;
  log: Log;
  session: string;
  typing: TypingIndicator;
}) {
  const { store, clock, log, session, typing } = options;
  const { decryptVote } = createPollVoteReader({ store, clock, log });
  let receiver: Pick<InboundService, 'receive'> | undefined;
  let receipts: Pick<DeliveryReceipts, 'receive'> | undefined;
  return {
    attachInbound(inbound: Pick<InboundService, 'receive'>): void {
      receiver = inbound;
    },
    attachReceipts(target: Pick<DeliveryReceipts, 'receive'>): void {
      receipts = target;
    },
    handleReceipt,
    handleIncoming,
  };

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
      if (!receipt.duplicate && key.remoteJid) typing.start(socket, key.remoteJid);
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') {
        log.info({ from: message.from, providerMessageId: key.id }, 'whatsapp-web: message from a number not enrolled');
        return;
      }
      throw error;
    }
  }
}

function messageTime(message: WhatsAppMessage): Date | undefined {
  const value = message.messageTimestamp;
  if (value === null || value === undefined) return undefined;
  const seconds = typeof value === 'number' ? value : value.toNumber();
  return Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000) : undefined;
}
