/**
 * The webhook channel's outbound side: every message is POSTed as JSON to `PROMPTPIPE_WEBHOOK_URL`; a 2xx answer
 * means delivered, anything else (or a timeout) rejects so the outbox retries with back-off.
 *
 * Payload: `{id, participant_id, to, kind, text, poll?}`. `id` is the outbound id, stable across retries: it is the
 * idempotency key (also sent as the `Idempotency-Key` header) with which a gateway recognises a redelivery after
 * PromptPipe crashed between sending and recording. With `PROMPTPIPE_WEBHOOK_SECRET` every attempt is signed at the
 * time it is sent (`X-PromptPipe-Timestamp` and `X-PromptPipe-Signature` over `<timestamp>.<body>`, as inbound), so
 * a gateway can refuse a replayed request; the body itself stays identical across retries. Without a URL messages are
 * only recorded in the transcript, and their delivery says so (`not_delivered`, never `sent`).
 */

import type { Clock } from '../../domain/clock.ts';
import { AppError, errorMessage } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import { createHttpClient } from '../../http/http-client.ts';
import { signatureHeaders } from '../../http/webhook-signature.ts';
import { systemClock } from '../../scheduling/clock.ts';
import type { Channel, DeliveryResult, OutboundMessage } from '../channel.ts';

export const WEBHOOK_CHANNEL = 'webhook';

/** The delivery error of every message while no gateway is configured. */
export const NO_WEBHOOK_URL_REASON = 'PROMPTPIPE_WEBHOOK_URL is not set: the message is only recorded, not sent';

/** The JSON body POSTed to the gateway. */
export interface WebhookOutboundPayload {
  id: string;
  participant_id: string;
  to: string;
  kind: 'text' | 'poll';
  text: string;
  poll?: { id: string; question: string; options: string[] };
}

export interface WebhookChannelOptions {
  /** Without it, nothing is sent: the message is already recorded in the transcript, its delivery `not_delivered`. */
  url: string | undefined;
  secret: string | undefined;
  /** Per request; a gateway that hangs must not hold a delivery slot forever. */
  timeoutMs: number;
  log: Log;
  /** The application's HTTP client (`createHttpClient`, made in main.ts); without one, a client of its own. */
  fetch?: typeof globalThis.fetch;
  /** The signing time: the real time a gateway compares with, even when the study clock is manual. */
  clock?: Clock;
}

export function toWebhookPayload(message: OutboundMessage): WebhookOutboundPayload {
  return {
    id: message.id,
    participant_id: message.participantId,
    to: message.to,
    kind: message.kind,
    text: message.text,
    ...(message.poll
      ? { poll: { id: message.poll.id, question: message.poll.question, options: [...message.poll.options] } }
      : {}),
  };
}

export function createWebhookChannel(options: WebhookChannelOptions): Channel {
  const { url, secret, timeoutMs, log } = options;
  const fetchFunction = options.fetch ?? createHttpClient().fetch;
  const clock = options.clock ?? systemClock;
  return {
    name: WEBHOOK_CHANNEL,
    // The payload carries the poll's structure, so a gateway can show a native poll; it can also forward the
    // options as text, because numbered and exact-text replies are accepted as poll answers too.
    supportsPolls: true,
    async send(message: OutboundMessage): Promise<DeliveryResult> {
      if (!url) {
        log.debug(
          { outboundId: message.id, participantId: message.participantId },
          'no webhook URL: message recorded only',
        );
        return { status: 'not_delivered', reason: NO_WEBHOOK_URL_REASON };
      }
      const body = JSON.stringify(toWebhookPayload(message));
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'idempotency-key': message.id,
        'user-agent': 'PromptPipe',
        ...(secret ? signatureHeaders(secret, body, clock.now()) : {}),
      };
      let response: Response;
      try {
        response = await fetchFunction(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
      } catch (error) {
        throw new AppError('channel_error', `webhook POST to ${url} failed: ${errorMessage(error)}`, { cause: error });
      }
      const responseText = await response.text().catch(() => '');
      if (!response.ok) {
        throw new AppError(
          'channel_error',
          `webhook POST to ${url} answered ${response.status}${responseText ? `: ${responseText.slice(0, 200)}` : ''}`,
        );
      }
      return providerIdFrom(responseText);
    },
  };
}

/** A gateway may answer `{"provider_message_id": "…"}`; anything else is fine too. */
function providerIdFrom(responseText: string): DeliveryResult {
  // Most gateways answer an empty body or plain text: not worth a JSON.parse that throws (a stack trace each time).
  if (!responseText.trimStart().startsWith('{')) return {};
  try {
    const value: unknown = JSON.parse(responseText);
    const id = (value as { provider_message_id?: unknown } | null)?.provider_message_id;
    return typeof id === 'string' && id ? { providerMessageId: id } : {};
  } catch {
    return {};
  }
}
