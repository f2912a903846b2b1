/**
 * The WhatsApp Cloud API channel's outbound side.
 *
 * Inside the 24-hour customer-service window (the participant wrote on this channel in the last 24 hours) messages go
 * out as they are: text, or a poll as reply buttons / a list. Outside it only an approved template may be sent
 * (outside-window/template-text.ts): the `text` template (`WHATSAPP_CLOUD_TEMPLATE_NAME`) with the text as its body
 * variable and a poll's options numbered in it, or a poll's quick-reply template whose buttons carry the options;
 * a message with follow-ups (a prompt and its polls) is one template. Without a template the message fails
 * permanently with a clear reason. Error 131047 ("re-engagement message") from the send call takes the same template
 * path; in a status webhook, the outbox re-sends the message (outside-window/window-resend.ts).
 *
 * Errors: 429, 5xx and network errors reject with a plain error (the outbox retries with back-off); any other 4xx is a
 * `PermanentDeliveryError` with Meta's error code and message. The access token is only ever in the header.
 */

import type { Clock } from '../../domain/clock.ts';
import { errorMessage } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import { ANY_LANGUAGE, type TemplateCatalogue, TemplateKind, withTemplate } from '../../domain/message-templates.ts';
import { createHttpClient } from '../../http/http-client.ts';
import { createBuiltInMessageCatalogue } from '../../i18n/built-in-catalogues.ts';
import type { MessageCatalogue } from '../../i18n/message-catalogue.ts';
import {
  type Channel,
  type DeliveryResult,
  type OutboundMessage,
  PermanentDeliveryError,
  type TemplateWindow,
} from '../channel.ts';
import { fitsOneTemplate, planTemplate } from '../outside-window/template-text.ts';
import { createWindowReckoning } from '../outside-window/window-reckoning.ts';
import { pollBody, templateBody, textBody, type WhatsAppTemplate } from './whatsapp-cloud-messages.ts';
import { WHATSAPP_CLOUD_CHANNEL } from './whatsapp-cloud-payload.ts';

export { CUSTOMER_SERVICE_WINDOW_MS } from '../outside-window/window-reckoning.ts';
/** "Message failed to send because more than 24 hours have passed since the customer last replied." */
export const REENGAGEMENT_ERROR_CODE = '131047';

export interface WhatsAppCloudChannelOptions {
  accessToken: string;
  phoneNumberId: string;
  apiUrl: string;
  /** The `text` template for every language (`WHATSAPP_CLOUD_TEMPLATE_NAME`), in `templateLanguage`. */
  templateName: string | undefined;
  templateLanguage: string;
  /** More templates by kind and language (poll quick-reply templates, other languages); they win over the above. */
  templates?: TemplateCatalogue<WhatsAppTemplate>;
  /** When the participant last wrote on this channel (the store's inbound messages). */
  lastInboundAt(participantId: string): Promise<Date | undefined>;
  clock: Pick<Clock, 'now'>;
  timeoutMs: number;
  log: Log;
  /** The numbered-poll instruction in the participant's language; defaults to the built-in catalogues. */
  messages?: MessageCatalogue;
  /** The application's HTTP client (`createHttpClient`, made in main.ts); without one, a client of its own. */
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
  const fetchFunction = options.fetch ?? createHttpClient().fetch;
  const messages = options.messages ?? createBuiltInMessageCatalogue();
  const endpoint = `${apiUrl.replace(/\/+$/, '')}/${encodeURIComponent(phoneNumberId)}/messages`;
  const base: TemplateCatalogue<WhatsAppTemplate> = templateName
    ? withTemplate({}, TemplateKind.TEXT, ANY_LANGUAGE, { name: templateName, language: templateLanguage })
    : {};
  const templates: TemplateCatalogue<WhatsAppTemplate> = { ...base, ...options.templates };
  if (options.templates?.text) templates.text = { ...base.text, ...options.templates.text };
  const reckoning = createWindowReckoning({ lastInboundAt: options.lastInboundAt, clock });

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
      const sent = json?.messages;
      const id = Array.isArray(sent) ? (sent[0] as { id?: unknown } | undefined)?.id : undefined;
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
    const plan = planTemplate(message, templates, messages);
    if (!plan) {
      throw new PermanentDeliveryError(
        `outside the WhatsApp 24-hour window (${reason}) and WHATSAPP_CLOUD_TEMPLATE_NAME is not set: ` +
          'only an approved template may be sent',
        { code: 'outside_24h_window' },
      );
    }
    log.info(
      { outboundId: message.id, participantId: message.participantId, reason, template: plan.template.name },
      'sending the WhatsApp template',
    );
    try {
      const id = await post(templateBody(message.to, plan));
      return id ? { providerMessageId: id } : {};
    } catch (error) {
      throw classify(error);
    }
  }

  const templateWindow: TemplateWindow = {
    isClosed: (message) => reckoning.isClosed(message.participantId),
    fitsOneTemplate: (message) => fitsOneTemplate(message, messages),
    closedErrorCodes: [REENGAGEMENT_ERROR_CODE],
  };

  return {
    name: WHATSAPP_CLOUD_CHANNEL,
    supportsPolls: true,
    templateWindow,
    async send(message) {
      if (message.outsideWindow) return sendTemplate(message, 'WhatsApp said the window is closed');
      if (message.followUps?.length) return sendTemplate(message, 'sent with the polls that follow it');
      const closed = await reckoning.reason(message.participantId);
      if (closed) return sendTemplate(message, closed);
      try {
        const id = await post(
          message.kind === 'poll' && message.poll ? pollBody(message) : textBody(message.to, message.text),
        );
        return id ? { providerMessageId: id } : {};
      } catch (error) {
        if (error instanceof GraphApiError && error.code === REENGAGEMENT_ERROR_CODE) {
          reckoning.closed(message.participantId);
          return sendTemplate(message, `error ${REENGAGEMENT_ERROR_CODE}`);
        }
        throw classify(error);
      }
    },
  };
}
