/**
 * The Twilio channel's outbound side: `POST {TWILIO_API_URL}/2010-04-01/Accounts/{AccountSid}/Messages.json`
 * (form-encoded `To`, `From` or `MessagingServiceSid`, `Body`, `StatusCallback`), Basic auth with the account SID and
 * auth token. SMS has no polls: a poll goes out as text with numbered options and numbered or typed replies are matched
 * by the inbound service. With a `whatsapp:` sender, the recipient gets the `whatsapp:` prefix too.
 *
 * WhatsApp through Twilio has the 24-hour window of the Cloud API, and Twilio takes WhatsApp templates only as Content
 * Templates: outside the window a message goes as `ContentSid` + `ContentVariables` (`{"1": "<text>"}`, no `Body`),
 * chosen by kind and language like the Cloud API's templates (outside-window/template-text.ts); a `Body` there fails
 * with 63016. A 63016 from the send call takes the template path at once; in a status callback, the outbox re-sends
 * the message (outside-window/window-resend.ts).
 *
 * Errors: 429, 5xx and network errors are retried by the outbox; any other 4xx is permanent, with Twilio's `code`.
 */

import type { Clock } from '../../domain/clock.ts';
import { errorMessage } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import { silentLog } from '../../domain/log.ts';
import type { TemplateCatalogue } from '../../domain/message-templates.ts';
import { createHttpClient } from '../../http/http-client.ts';
import { createBuiltInMessageCatalogue } from '../../i18n/built-in-catalogues.ts';
import type { MessageCatalogue } from '../../i18n/message-catalogue.ts';
import { systemClock } from '../../scheduling/clock.ts';
import {
  type Channel,
  type DeliveryResult,
  type OutboundMessage,
  PermanentDeliveryError,
  type TemplateWindow,
} from '../channel.ts';
import { fitsOneTemplate, planTemplate } from '../outside-window/template-text.ts';
import { createWindowReckoning } from '../outside-window/window-reckoning.ts';
import { TWILIO_CHANNEL } from './twilio-payload.ts';

export const TWILIO_STATUS_PATH = '/channels/twilio/status';
/** "Failed to send freeform message because you are outside the allowed window." */
export const OUTSIDE_WINDOW_ERROR_CODE = '63016';

export interface TwilioChannelOptions {
  accountSid: string;
  authToken: string;
  from: string | undefined;
  messagingServiceSid: string | undefined;
  publicUrl: string;
  apiUrl: string;
  timeoutMs: number;
  /** Content Templates (`HX…` SIDs) by kind and language, sent outside the WhatsApp window. */
  contentTemplates?: TemplateCatalogue<string>;
  /** When the participant last wrote on this channel: the WhatsApp window (a `whatsapp:` sender only). */
  lastInboundAt?(participantId: string): Promise<Date | undefined>;
  clock?: Pick<Clock, 'now'>;
  log?: Log;
  /** The numbered-poll instruction in the participant's language; defaults to the built-in catalogues. */
  messages?: MessageCatalogue;
  /** The application's HTTP client (`createHttpClient`, made in main.ts); without one, a client of its own. */
  fetch?: typeof globalThis.fetch;
}

class TwilioApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  constructor(status: number, code: string | undefined, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function createTwilioChannel(options: TwilioChannelOptions): Channel {
  const { accountSid, authToken, from, messagingServiceSid, publicUrl, timeoutMs } = options;
  const fetchFunction = options.fetch ?? createHttpClient().fetch;
  const log = options.log ?? silentLog;
  const messages = options.messages ?? createBuiltInMessageCatalogue();
  const contentTemplates = options.contentTemplates ?? {};
  const endpoint = `${options.apiUrl.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
  const whatsapp = from?.toLowerCase().startsWith('whatsapp:') ?? false;
  const reckoning = createWindowReckoning({
    lastInboundAt: options.lastInboundAt ?? (async () => undefined),
    clock: options.clock ?? systemClock,
  });
  // Without a record of inbound messages, PromptPipe cannot reckon the window: Twilio's 63016 tells it instead.
  const reckons = whatsapp && options.lastInboundAt !== undefined;

  function form(message: OutboundMessage, content: Record<string, string>): URLSearchParams {
    const params = new URLSearchParams();
    params.set('To', whatsapp ? `whatsapp:${message.to}` : message.to);
    if (from) params.set('From', from);
    else if (messagingServiceSid) params.set('MessagingServiceSid', messagingServiceSid);
    for (const [name, value] of Object.entries(content)) params.set(name, value);
    params.set('StatusCallback', `${publicUrl.replace(/\/+$/, '')}${TWILIO_STATUS_PATH}`);
    return params;
  }

  async function post(params: URLSearchParams): Promise<DeliveryResult> {
    let response: Response;
    try {
      response = await fetchFunction(endpoint, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
        body: params.toString(),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new Error(`Twilio request failed: ${errorMessage(error)}`, { cause: error });
    }
    const text = await response.text().catch(() => '');
    let json: { sid?: unknown; code?: unknown; message?: unknown; status?: unknown } | undefined;
    try {
      json = JSON.parse(text) as typeof json;
    } catch {
      json = undefined;
    }
    if (response.ok) return typeof json?.sid === 'string' ? { providerMessageId: json.sid } : {};
    const code = json?.code === undefined || json.code === null ? undefined : String(json.code);
    const description = `Twilio answered ${response.status}${code ? ` (error ${code})` : ''}: ${
      typeof json?.message === 'string' ? json.message : text.slice(0, 200) || 'no details'
    }`;
    throw new TwilioApiError(response.status, code, description);
  }

  function classify(error: unknown): Error {
    if (!(error instanceof TwilioApiError)) return error as Error;
    if (error.status === 429 || error.status >= 500) return new Error(error.message);
    return new PermanentDeliveryError(error.message, error.code === undefined ? {} : { code: error.code });
  }

  async function sendTemplate(message: OutboundMessage, reason: string): Promise<DeliveryResult> {
    const plan = planTemplate(message, contentTemplates, messages);
    if (!plan) {
      throw new PermanentDeliveryError(
        `outside the WhatsApp 24-hour window (${reason}) and no Twilio Content Template is configured ` +
          '(TWILIO_CONTENT_SID_TEXT or TWILIO_CONTENT_TEMPLATES_FILE): only an approved template may be sent',
        { code: 'outside_24h_window' },
      );
    }
    log.info(
      { outboundId: message.id, participantId: message.participantId, reason, contentSid: plan.template },
      'sending the WhatsApp content template through Twilio',
    );
    try {
      return await post(
        form(message, { ContentSid: plan.template, ContentVariables: JSON.stringify({ 1: plan.text }) }),
      );
    } catch (error) {
      throw classify(error);
    }
  }

  const templateWindow: TemplateWindow = {
    isClosed: async (message) => reckons && (await reckoning.isClosed(message.participantId)),
    fitsOneTemplate: (message) => fitsOneTemplate(message, messages),
    closedErrorCodes: [OUTSIDE_WINDOW_ERROR_CODE],
  };

  return {
    name: TWILIO_CHANNEL,
    supportsPolls: false,
    // Twilio answers STOP on SMS itself (Advanced Opt-Out); over WhatsApp it does not.
    confirmsOptOut: !whatsapp,
    ...(whatsapp ? { templateWindow } : {}),
    async send(message) {
      if (whatsapp) {
        if (message.outsideWindow) return sendTemplate(message, 'Twilio said the window is closed');
        if (message.followUps?.length) return sendTemplate(message, 'sent with the polls that follow it');
        const closed = reckons ? await reckoning.reason(message.participantId) : undefined;
        if (closed) return sendTemplate(message, closed);
      }
      try {
        return await post(form(message, { Body: message.text }));
      } catch (error) {
        if (whatsapp && error instanceof TwilioApiError && error.code === OUTSIDE_WINDOW_ERROR_CODE) {
          reckoning.closed(message.participantId);
          return sendTemplate(message, `error ${OUTSIDE_WINDOW_ERROR_CODE}`);
        }
        throw classify(error);
      }
    },
  };
}
