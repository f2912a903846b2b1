/**
 * Twilio's form-encoded webhooks: an incoming message (`MessageSid`, `From`, `To`, `Body` or a quick-reply's
 * `ButtonText`, `NumMedia`…) and a status callback (`MessageSid`, `MessageStatus`, `ErrorCode`). `whatsapp:+…`
 * addresses are reduced to E.164.
 */
import type { ChannelInboundMessage } from '../../inbound/inbound-port.ts';
import type { DeliveryReceipt, DeliveryStatus } from '../channel.ts';

export const TWILIO_CHANNEL = 'twilio';

export function stripWhatsAppPrefix(address: string): string {
  return address.replace(/^whatsapp:/i, '').trim();
}

export function parseTwilioForm(raw: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(raw)) params[key] = value;
  return params;
}

export function parseTwilioMessage(params: Record<string, string>): ChannelInboundMessage | undefined {
  const from = params.From ? stripWhatsAppPrefix(params.From) : '';
  if (!from) return undefined;
  const sid = params.MessageSid ?? params.SmsSid;
  const media = Number(params.NumMedia ?? '0');
  // A tapped quick-reply button of a content template carries its title as `ButtonText` (and usually as `Body`).
  const body = params.Body?.trim() || params.ButtonText?.trim() || '';
  const mediaType = params.MediaContentType0?.split('/')[0];
  const text = body || (media > 0 ? `[${mediaType || 'media'}]` : params.Latitude ? '[location]' : '');
  return { channel: TWILIO_CHANNEL, from, text, ...(sid ? { providerMessageId: sid } : {}) };
}

const STATUSES: Record<string, DeliveryStatus> = {
  queued: 'queued',
  accepted: 'queued',
  sending: 'queued',
  sent: 'sent',
  delivered: 'delivered',
  read: 'read',
  undelivered: 'undelivered',
  failed: 'failed',
};

export function parseTwilioStatus(params: Record<string, string>): DeliveryReceipt | undefined {
  const sid = params.MessageSid ?? params.SmsSid;
  const status = STATUSES[(params.MessageStatus ?? params.SmsStatus ?? '').toLowerCase()];
  if (!sid || !status) return undefined;
  return {
    channel: TWILIO_CHANNEL,
    providerMessageId: sid,
    status,
    ...(params.ErrorCode ? { errorCode: params.ErrorCode } : {}),
    ...(params.ErrorMessage ? { errorMessage: params.ErrorMessage } : {}),
  };
}
