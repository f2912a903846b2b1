/**
 * The Twilio channel's outbound side: `POST {TWILIO_API_URL}/2010-04-01/Accounts/{AccountSid}/Messages.json`
 * (form-encoded `To`, `From` or `MessagingServiceSid`, `Body`, `StatusCallback`), Basic auth with the account SID and
 * auth token. SMS has no polls: a poll goes out as text with numbered options and numbered or typed replies are matched
 * by the inbound service. With a `whatsapp:` sender, the recipient gets the `whatsapp:` prefix too.
 *
 * Errors: 429, 5xx and network errors are retried by the outbox; any other 4xx is permanent, with Twilio's `code`.
 */
import { errorMessage } from '../../domain/errors.ts';
import { keepAliveFetch } from '../../http/keep-alive-fetch.ts';
import { type Channel, type OutboundMessage, PermanentDeliveryError } from '../channel.ts';
import { TWILIO_CHANNEL } from './twilio-payload.ts';

export const TWILIO_STATUS_PATH = '/channels/twilio/status';

export interface TwilioChannelOptions {
  accountSid: string;
  authToken: string;
  from: string | undefined;
  messagingServiceSid: string | undefined;
  publicUrl: string;
  apiUrl: string;
  timeoutMs: number;
  fetch?: typeof globalThis.fetch;
}

export function createTwilioChannel(options: TwilioChannelOptions): Channel {
  const { accountSid, authToken, from, messagingServiceSid, publicUrl, timeoutMs } = options;
  const fetchFunction = options.fetch ?? keepAliveFetch;
  const endpoint = `${options.apiUrl.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
  const whatsapp = from?.toLowerCase().startsWith('whatsapp:') ?? false;

  function form(message: OutboundMessage): URLSearchParams {
    const params = new URLSearchParams();
    params.set('To', whatsapp ? `whatsapp:${message.to}` : message.to);
    if (from) params.set('From', from);
    else if (messagingServiceSid) params.set('MessagingServiceSid', messagingServiceSid);
    params.set('Body', message.text);
    params.set('StatusCallback', `${publicUrl.replace(/\/+$/, '')}${TWILIO_STATUS_PATH}`);
    return params;
  }

  return {
    name: TWILIO_CHANNEL,
    supportsPolls: false,
    // Twilio answers STOP on SMS itself (Advanced Opt-Out); over WhatsApp it does not.
    confirmsOptOut: !whatsapp,
    async send(message) {
      let response: Response;
      try {
        response = await fetchFunction(endpoint, {
          method: 'POST',
          headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
          body: form(message).toString(),
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
      if (response.ok) {
        return typeof json?.sid === 'string' ? { providerMessageId: json.sid } : {};
      }
      const code = json?.code === undefined || json.code === null ? undefined : String(json.code);
      const description = `Twilio answered ${response.status}${code ? ` (error ${code})` : ''}: ${
        typeof json?.message === 'string' ? json.message : text.slice(0, 200) || 'no details'
      }`;
      if (response.status === 429 || response.status >= 500) throw new Error(description);
      throw new PermanentDeliveryError(description, code === undefined ? {} : { code });
    },
  };
}
