/**
 * The few Telegram Bot API methods the channel calls, through grammY's API client (`POST <api>/bot<token>/<method>`
 * with JSON; `{ok, result}` or `{ok: false, error_code, description, parameters}` back). The token is only ever in
 * the URL grammY builds, and grammY leaves that URL out of its errors.
 *
 * Errors of a send, as the outbox needs them (`classifyTelegramError`):
 * - 429 with `parameters.retry_after`: `DeliveryDeferredError` — the delivery waits as long as Telegram asked;
 * - 403 "bot was blocked by the user": `RecipientOptedOutError` — the participant is withdrawn, as by STOP;
 * - any other 4xx (chat not found, message too long…): `PermanentDeliveryError` with Telegram's code;
 * - 5xx, network errors and timeouts: a plain error, retried with back-off.
 */
import { Api, GrammyError, HttpError } from 'grammy';
import { errorMessage } from '../../domain/errors.ts';
import { createHttpClient } from '../../http/http-client.ts';
import { DeliveryDeferredError, PermanentDeliveryError, RecipientOptedOutError } from '../channel.ts';

/** How long a rate-limited delivery waits when Telegram's 429 names no wait. */
const DEFAULT_RETRY_AFTER_MS = 1_000;

export interface TelegramBotApi {
  /** The bot's username (for the `t.me` links). */
  getMe(): Promise<{ id: number; username: string }>;
  sendText(chatId: string, text: string): Promise<{ messageId: string }>;
  /** A native, non-anonymous, single-choice poll: its answers arrive as `poll_answer` updates naming the voter. */
  sendPoll(
    chatId: string,
    question: string,
    options: readonly string[],
  ): Promise<{ messageId: string; pollId: string }>;
  /** Long polling: the updates after `offset` (confirming those before it), waiting up to `timeoutSeconds`. */
  getUpdates(offset: number | undefined, timeoutSeconds: number, signal: AbortSignal): Promise<unknown[]>;
  setWebhook(url: string, secretToken: string): Promise<void>;
  deleteWebhook(): Promise<void>;
}

/** The updates the channel acts on; anything else Telegram would send is not even delivered. */
export const ALLOWED_UPDATES = ['message', 'poll_answer', 'my_chat_member'] as const;

export function createTelegramBotApi(options: {
  token: string;
  apiUrl: string;
  /** Each send's limit (long polling waits longer, by its own timeout). */
  timeoutMs: number;
  /** The application's HTTP client (`createHttpClient`, made in main.ts); without one, a client of its own. */
  fetch?: typeof globalThis.fetch;
}): TelegramBotApi {
  const api = new Api(options.token, {
    apiRoot: options.apiUrl.replace(/\/+$/, ''),
    fetch: withNativeSignal(options.fetch ?? createHttpClient().fetch) as never,
  });
  const limit = () => grammySignal(AbortSignal.timeout(options.timeoutMs));
  // Chat ids are integers below 2^53: sent as JSON numbers, as Telegram documents them.
  const chat = (chatId: string) => Number(chatId);
  return {
    async getMe() {
      const me = await api.getMe(limit());
      return { id: me.id, username: me.username };
    },
    async sendText(chatId, text) {
      const sent = await api.sendMessage(chat(chatId), text, {}, limit());
      return { messageId: String(sent.message_id) };
    },
    async sendPoll(chatId, question, pollOptions) {
      const sent = await api.sendPoll(
        chat(chatId),
        question,
        pollOptions.map((text) => ({ text })),
        { is_anonymous: false, allows_multiple_answers: false },
        limit(),
      );
      return { messageId: String(sent.message_id), pollId: sent.poll.id };
    },
    async getUpdates(offset, timeoutSeconds, signal) {
      return api.getUpdates(
        { ...(offset === undefined ? {} : { offset }), timeout: timeoutSeconds, allowed_updates: [...ALLOWED_UPDATES] },
        grammySignal(signal),
      );
    },
    async setWebhook(url, secretToken) {
      await api.setWebhook(url, { secret_token: secretToken, allowed_updates: [...ALLOWED_UPDATES] }, limit());
    },
    async deleteWebhook() {
      await api.deleteWebhook({}, limit());
    },
  };
}

/** grammY types its signals as its polyfill's; at run time it only listens to them, which a native one supports. */
type GrammySignal = Parameters<Api['getMe']>[0];
function grammySignal(signal: AbortSignal): GrammySignal {
  return signal as unknown as GrammySignal;
}

/**
 * grammY hands `fetch` the signal of its polyfilled AbortController, which Node's own fetch refuses (a test may inject
 * it): it is relayed to a native one.
 */
function withNativeSignal(fetchFunction: typeof globalThis.fetch): typeof globalThis.fetch {
  return (input, init = {}) => {
    const given = init.signal as (EventTarget & { aborted: boolean }) | null | undefined;
    if (!given || given instanceof AbortSignal) return fetchFunction(input, init);
    const relay = new AbortController();
    if (given.aborted) relay.abort();
    else given.addEventListener('abort', () => relay.abort(), { once: true });
    return fetchFunction(input, { ...init, signal: relay.signal });
  };
}

/** Telegram's answer as an error, or undefined for a network failure or timeout. */
export function telegramErrorCode(error: unknown): number | undefined {
  return error instanceof GrammyError ? error.error_code : undefined;
}

/** What a failed send means to the outbox (see the header). */
export function classifyTelegramError(error: unknown): Error {
  if (error instanceof GrammyError) {
    const text = `Telegram answered ${error.error_code}: ${error.description}`;
    if (error.error_code === 429) {
      const seconds = error.parameters.retry_after;
      return new DeliveryDeferredError(text, seconds && seconds > 0 ? seconds * 1000 : DEFAULT_RETRY_AFTER_MS);
    }
    if (error.error_code === 403 && /blocked by the user/i.test(error.description)) {
      return new RecipientOptedOutError(text, { code: 'blocked' });
    }
    if (error.error_code >= 400 && error.error_code < 500) {
      return new PermanentDeliveryError(text, { code: String(error.error_code) });
    }
    return new Error(text);
  }
  if (error instanceof HttpError) return new Error(`Telegram could not be reached: ${error.message}`);
  return new Error(`Telegram request failed: ${errorMessage(error)}`);
}
