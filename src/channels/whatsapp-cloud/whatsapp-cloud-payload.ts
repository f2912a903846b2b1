/**
 * The WhatsApp Cloud API's webhook payload (`object: whatsapp_business_account`), read defensively: every field is
 * optional, unknown message types are kept as a short placeholder, nothing here throws on odd input.
 *
 * `entry[].changes[].value.messages[]` become inbound messages; `statuses[]` become delivery receipts.
 */
import type { ChannelInboundMessage } from '../../inbound/inbound-port.ts';
import type { DeliveryReceipt, DeliveryStatus } from '../channel.ts';

export const WHATSAPP_CLOUD_CHANNEL = 'whatsapp-cloud';

/** The id of an interactive reply: `<pollId>:<option index>`, set when the poll is sent. */
export function pollReplyId(pollId: string, index: number): string {
  return `${pollId}:${index}`;
}

export function parsePollReplyId(id: string): { pollId: string; index: number } | undefined {
  const match = /^(.+):(\d+)$/.exec(id);
  return match?.[1] && match[2] ? { pollId: match[1], index: Number(match[2]) } : undefined;
}

export interface WhatsAppWebhookContent {
  messages: ChannelInboundMessage[];
  receipts: DeliveryReceipt[];
}

type Json = Record<string, unknown>;

function asObject(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function asString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined;
}

function fromUnixSeconds(value: unknown): Date | undefined {
  const seconds = Number(asString(value));
  return Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000) : undefined;
}

/** WhatsApp ids are digits without `+`. */
export function toE164(waId: string): string {
  return waId.startsWith('+') ? waId : `+${waId}`;
}

const STATUS_MAP: Record<string, DeliveryStatus> = {
  sent: 'sent',
  delivered: 'delivered',
  read: 'read',
  failed: 'failed',
};

export function parseWhatsAppWebhook(body: unknown): WhatsAppWebhookContent {
  const messages: ChannelInboundMessage[] = [];
  const receipts: DeliveryReceipt[] = [];
  for (const entry of asArray(asObject(body)?.entry)) {
    for (const change of asArray(asObject(entry)?.changes)) {
      const value = asObject(asObject(change)?.value);
      if (!value) continue;
      for (const raw of asArray(value.messages)) {
        const message = parseMessage(asObject(raw));
        if (message) messages.push(message);
      }
      for (const raw of asArray(value.statuses)) {
        const receipt = parseStatus(asObject(raw));
        if (receipt) receipts.push(receipt);
      }
    }
  }
  return { messages, receipts };
}

function parseMessage(message: Json | undefined): ChannelInboundMessage | undefined {
  const from = asString(message?.from);
  if (!message || !from) return undefined;
  const id = asString(message.id);
  const timestamp = fromUnixSeconds(message.timestamp);
  const base: ChannelInboundMessage = {
    channel: WHATSAPP_CLOUD_CHANNEL,
    from: toE164(from),
    text: '',
    ...(id ? { providerMessageId: id } : {}),
    ...(timestamp ? { timestamp } : {}),
  };
  const type = asString(message.type) ?? 'unknown';
  if (type === 'text') return { ...base, text: asString(asObject(message.text)?.body) ?? '' };
  if (type === 'button') {
    // A quick-reply button of a template message: a poll's option when its payload names one (`<pollId>:<index>`).
    const button = asObject(message.button);
    const text = asString(button?.text) ?? asString(button?.payload) ?? '[button]';
    const replyId = parsePollReplyId(asString(button?.payload) ?? '');
    return replyId
      ? { ...base, text, pollAnswer: { pollId: replyId.pollId, optionIndex: replyId.index, option: text } }
      : { ...base, text };
  }
  if (type === 'interactive') {
    const interactive = asObject(message.interactive);
    const reply = asObject(interactive?.button_reply) ?? asObject(interactive?.list_reply);
    const title = asString(reply?.title) ?? '';
    const replyId = parsePollReplyId(asString(reply?.id) ?? '');
    const option = asString(reply?.description) && title.endsWith('…') ? asString(reply?.description) : title;
    if (option) {
      return {
        ...base,
        text: option,
        pollAnswer: { ...(replyId ? { pollId: replyId.pollId, optionIndex: replyId.index } : {}), option },
      };
    }
    return { ...base, text: '[interactive]' };
  }
  if (type === 'location') {
    const location = asObject(message.location);
    const where = [asString(location?.name), asString(location?.latitude), asString(location?.longitude)]
      .filter(Boolean)
      .join(' ');
    return { ...base, text: `[location${where ? ` ${where}` : ''}]` };
  }
  const caption = asString(asObject(message[type])?.caption);
  return { ...base, text: `[${type}]${caption ? ` ${caption}` : ''}` };
}

function parseStatus(status: Json | undefined): DeliveryReceipt | undefined {
  const id = asString(status?.id);
  const mapped = STATUS_MAP[asString(status?.status) ?? ''];
  if (!status || !id || !mapped) return undefined;
  const error = asObject(asArray(status.errors)[0]);
  const at = fromUnixSeconds(status.timestamp);
  const errorCode = asString(error?.code);
  const errorMessage =
    asString(asObject(error?.error_data)?.details) ?? asString(error?.message) ?? asString(error?.title);
  return {
    channel: WHATSAPP_CLOUD_CHANNEL,
    providerMessageId: id,
    status: mapped,
    ...(at ? { at } : {}),
    ...(errorCode ? { errorCode } : {}),
    ...(errorMessage ? { errorMessage } : {}),
  };
}
