/**
 * The WhatsApp Cloud API channel's outbound side.
 *
 * Inside the 24-hour customer-service window (the participant wrote on this channel in the last 24 hours) messages go
 * out as they are: text, or a poll as reply buttons / a list. Outside it only an approved template may be sent: the
 * configured `WHATSAPP_CLOUD_TEMPLATE_NAME` with the text as its body parameter; without one the message fails
 * permanently with a clear reason. Error 131047 ("re-engagement message") takes the same template path.
 *
 * Errors: 429, 5xx and network errors reject with a plain error (the outbox retries with back-off); any other 4xx is a
 * `PermanentDeliveryError` with Meta's error code and message. The access token is only ever in the header.
 */
import { errorMessage } from '../../domain/errors.ts';
import { keepAliveFetch } from '../../http/keep-alive-fetch.ts';
import type { Log } from '../../observability/log.ts';
import type { Clock } from '../../scheduling/clock.ts';
import { type Channel, type DeliveryResult, type OutboundMessage, PermanentDeliveryError } from '../channel.ts';
import { pollBody, templateBody, textBody } from './whatsapp-cloud-messages.ts';
import { WHATSAPP_CLOUD_CHANNEL } from './whatsapp-cloud-payload.ts';

export const CUSTOMER_SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;
/** "Message failed to send because more than 24 hours have passed since the customer last replied." */
export const REENGAGEMENT_ERROR_CODE = '131047';

export interface WhatsAppCloudChannelOptions {
  accessToken: string;
  phoneNumberId: string;
  apiUrl: string;
  templateName: string | undefined;
  templateLanguage: string;
  /** When the participant last wrote on this channel (the store's inbound messages). */
  lastInboundAt(participantId: string): Promise<Date | undefined>;
  clock: Pick<Clock, 'now'>;
  timeoutMs: number;
  log: Log;
  fetch?: typeof globalThis.fetch;
}

class GraphApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  constructor(status: number, code: string | undefined, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function createWhatsAppCloudChannel(options: WhatsAppCloudChannelOptions): Channel {
  const { accessToken, phoneNumberId, apiUrl, templateName, templateLanguage, clock, timeoutMs, log } = options;
  const fetchFunction = options.fetch ?? keepAliveFetch;
  const endpoint = `${apiUrl.replace(/\/+$/, '')}/${encodeURIComponent(phoneNumberId)}/messages`;

  async function post(body: Record<string, unknown>): Promise<string | undefined> {
    let response: Response;
    try {
      response = await fetchFunction(endpoint, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new Error(`WhatsApp Cloud API request failed: ${errorMessage(error)}`, { cause: error });
    }
    const text = await response.text().catch(() => '');
    let json: Record<string, unknown> | undefined;
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      json = undefined;
    }
    if (response.ok) {
      const messages = json?.messages;
      const id = Array.isArray(messages) ? (messages[0] as { id?: unknown } | undefined)?.id : undefined;
      return typeof id === 'string' ? id : undefined;
    }
    const error = (json?.error ?? {}) as { code?: unknown; message?: unknown; error_data?: { details?: unknown } };
    const code = error.code === undefined ? undefined : String(error.code);
    const details = typeof error.error_data?.details === 'string' ? ` (${error.error_data.details})` : '';
    const message = `${typeof error.message === 'string' ? error.message : text.slice(0, 200) || 'no details'}${details}`;
    throw new GraphApiError(response.status, code, message);
  }

  function classify(error: unknown): Error {
    if (!(error instanceof GraphApiError)) return error as Error;
    const text = `WhatsApp Cloud API answered ${error.status}${error.code ? ` (error ${error.code})` : ''}: ${error.message}`;
    if (error.status === 429 || error.status >= 500) return new Error(text);
    return new PermanentDeliveryError(text, error.code === undefined ? {} : { code: error.code });
  }

  async function sendTemplate(message: OutboundMessage, reason: string): Promise<DeliveryResult> {
    if (!templateName) {
      throw new PermanentDeliveryError(
        `outside the WhatsApp 24-hour window (${reason}) and WHATSAPP_CLOUD_TEMPLATE_NAME is not set: ` +
          'only an approved template may be sent',
        { code: 'outside_24h_window' },
      );
    }
    log.info({ outboundId: message.id, participantId: message.participantId, reason }, 'sending the WhatsApp template');
    try {
      const id = await post(templateBody(message.to, templateName, templateLanguage, message.text));
      return id ? { providerMessageId: id } : {};
    } catch (error) {
      throw classify(error);
    }
  }

  return {
    name: WHATSAPP_CLOUD_CHANNEL,
    supportsPolls: true,
    async send(message) {
      const lastInbound = await options.lastInboundAt(message.participantId);
      if (!lastInbound || clock.now().getTime() - lastInbound.getTime() >= CUSTOMER_SERVICE_WINDOW_MS) {
        return sendTemplate(message, lastInbound ? 'no message from the participant in 24 hours' : 'never wrote');
      }
      try {
        const id = await post(
          message.kind === 'poll' && message.poll ? pollBody(message) : textBody(message.to, message.text),
        );
        return id ? { providerMessageId: id } : {};
      } catch (error) {
        if (error instanceof GraphApiError && error.code === REENGAGEMENT_ERROR_CODE) {
          return sendTemplate(message, `error ${REENGAGEMENT_ERROR_CODE}`);
        }
        throw classify(error);
      }
    },
  };
}
