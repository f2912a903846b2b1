/**
 * The `telegram` channel: a Telegram bot, through the Bot API (grammY's client, `telegram-bot-api.ts`).
 *
 * Participants are reached in the chat bound to them by their deep link (`telegram-links.ts`); until then their
 * messages wait (`held-deliveries.ts`). Outbound: text (split at Telegram's 4096 characters), and polls as native,
 * non-anonymous Telegram polls whose ids are stored so that `poll_answer` updates become structured answers. What
 * was sent is recorded per outbound id, so a retried delivery already sent is not sent twice. Proactive messages are
 * free on Telegram: no window, no template.
 *
 * Inbound: `TELEGRAM_MODE=webhook` — Telegram posts updates to `/channels/telegram/webhook` (the webhook is set at
 * start-up when `PROMPTPIPE_PUBLIC_URL` is known) — or `polling`, `getUpdates` long polling for a laptop without a
 * public URL. Both hand each update to `telegram-inbound.ts`.
 */

import type { Clock } from '../../domain/clock.ts';
import type { Log } from '../../domain/log.ts';
import type { MessageCatalogue } from '../../i18n/message-catalogue.ts';
import type { InboundService } from '../../inbound/inbound-port.ts';
import type { Store } from '../../store/store.ts';
import { type Channel, type DeliveryResult, type OutboundMessage, PermanentDeliveryError } from '../channel.ts';
import { TelegramNotLinkedError } from './held-deliveries.ts';
import { classifyTelegramError, type TelegramBotApi } from './telegram-bot-api.ts';
import { createTelegramUpdateHandler, TELEGRAM_CHANNEL } from './telegram-inbound.ts';
import { createTelegramLinks, type TelegramLinks } from './telegram-links.ts';
import { type LongPolling, startLongPolling } from './telegram-polling.ts';
import { TELEGRAM_WEBHOOK_PATH } from './telegram-webhook-route.ts';

export { TELEGRAM_CHANNEL };

/** Telegram's longest text message. */
export const TELEGRAM_TEXT_LIMIT = 4096;

export interface TelegramChannel extends Channel, Pick<TelegramLinks, 'linkFor'> {
  /** Where inbound messages go, and what blocking the bot does (both built after the channel). */
  attach(targets: {
    inbound: Pick<InboundService, 'receive'>;
    onBlocked: (participantId: string) => Promise<void>;
  }): void;
  /** One Bot API update (the webhook route; long polling calls it itself). */
  handleUpdate(update: unknown): Promise<void>;
  /** Whether the participant has opened their link (a chat is bound to them). */
  isLinked(participantId: string): Promise<boolean>;
}

export interface TelegramChannelOptions {
  api: TelegramBotApi;
  mode: 'webhook' | 'polling';
  /** Given to `setWebhook`, checked on every webhook request. */
  webhookSecret: string | undefined;
  /** `PROMPTPIPE_PUBLIC_URL`: where Telegram is told to post (webhook mode); without it the webhook is set by hand. */
  publicUrl: string | undefined;
  store: Store;
  clock: Clock;
  log: Log;
  messages: MessageCatalogue;
  /** Held deliveries were re-queued for now: wake the job runner. */
  onJobEnqueued: () => void;
}

/** Splits at the last line break (else space) before the limit, so no word is cut where it can be helped. */
export function splitText(text: string, limit = TELEGRAM_TEXT_LIMIT): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const window = rest.slice(0, limit);
    const lineBreak = window.lastIndexOf('\n');
    const cut = lineBreak > limit / 2 ? lineBreak : window.lastIndexOf(' ');
    const end = cut > limit / 2 ? cut : limit;
    parts.push(rest.slice(0, end));
    rest = rest.slice(end).replace(/^[\n ]/, '');
  }
  return [...parts, rest];
}

export function createTelegramChannel(options: TelegramChannelOptions): TelegramChannel {
  const { api, store, clock, log } = options;
  let botUsername: string | undefined;
  let targets: Parameters<TelegramChannel['attach']>[0] | undefined;
  let polling: LongPolling | undefined;
  const links = createTelegramLinks({
    store,
    clock,
    botUsername: () => {
      if (!botUsername) throw new Error('telegram: the bot is not started yet (its username comes from getMe)');
      return botUsername;
    },
  });
  const handleUpdate = createTelegramUpdateHandler({
    store,
    clock,
    log,
    api,
    links,
    messages: options.messages,
    receiver: () => targets?.inbound,
    onBlocked: async (participantId) => targets?.onBlocked(participantId),
    onJobEnqueued: options.onJobEnqueued,
  });

  async function chatFor(message: OutboundMessage): Promise<string> {
    const chatId = await store.telegram.chatOf(message.participantId);
    if (chatId) return chatId;
    // The unregister notice of someone who never opened the link: there is nobody to wait for.
    if (!(await store.participants.get(message.participantId))) {
      throw new PermanentDeliveryError('the participant is gone and never opened their Telegram link', {
        code: 'not_linked',
      });
    }
    throw new TelegramNotLinkedError(message.participantId);
  }

  /** Telegram's refusal as the outbox needs it; what fails after Telegram accepted (recording it) stays as it is. */
  async function call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw classifyTelegramError(error);
    }
  }

  async function deliver(message: OutboundMessage, chatId: string): Promise<DeliveryResult> {
    const now = clock.now();
    const record = { outboundId: message.id, participantId: message.participantId, chatId, createdAt: now };
    if (message.kind === 'poll' && message.poll) {
      const { question, options: choices } = message.poll;
      const sent = await call(() => api.sendPoll(chatId, question, choices));
      await store.telegram.recordSent({
        ...record,
        messageId: sent.messageId,
        poll: { pollId: sent.pollId, question, options: [...choices] },
      });
      return { providerMessageId: `${chatId}:${sent.messageId}` };
    }
    let messageId = '';
    for (const part of splitText(message.text)) messageId = (await call(() => api.sendText(chatId, part))).messageId;
    await store.telegram.recordSent({ ...record, messageId });
    return { providerMessageId: `${chatId}:${messageId}` };
  }

  async function startWebhook(): Promise<void> {
    if (!options.publicUrl) {
      log.warn(
        {},
        `telegram: PROMPTPIPE_PUBLIC_URL is not set, so the webhook was not registered: call setWebhook with ` +
          `<public URL>${TELEGRAM_WEBHOOK_PATH} and TELEGRAM_WEBHOOK_SECRET yourself, or use TELEGRAM_MODE=polling`,
      );
      return;
    }
    const url = `${options.publicUrl}${TELEGRAM_WEBHOOK_PATH}`;
    try {
      await api.setWebhook(url, options.webhookSecret ?? '');
      log.info({ url }, `telegram: updates are posted to ${url}`);
    } catch (error) {
      // The server still serves the other channels; Telegram keeps the updates until a webhook works (24 hours).
      log.error({ url, error: classifyTelegramError(error).message }, 'telegram: setWebhook failed');
    }
  }

  return {
    name: TELEGRAM_CHANNEL,
    supportsPolls: true,
    async send(message) {
      const already = await store.telegram.sentByOutboundId(message.id);
      if (already) return { providerMessageId: `${already.chatId}:${already.messageId}` };
      return deliver(message, await chatFor(message));
    },
    async start() {
      let me: { username: string };
      try {
        me = await api.getMe();
      } catch (error) {
        throw new Error(
          `telegram: getMe failed; check TELEGRAM_BOT_TOKEN and TELEGRAM_API_URL (${
            classifyTelegramError(error).message
          })`,
        );
      }
      botUsername = me.username;
      log.info({ bot: me.username, mode: options.mode }, `telegram: bot @${me.username} (${options.mode})`);
      if (options.mode === 'webhook') return startWebhook();
      // getUpdates is refused while a webhook is set.
      await api.deleteWebhook();
      polling = startLongPolling({ api, handle: handleUpdate, log });
    },
    async stop() {
      await polling?.stop();
      polling = undefined;
    },
    attach(next) {
      targets = next;
    },
    handleUpdate,
    linkFor: (participantId) => links.linkFor(participantId),
    isLinked: async (participantId) => (await store.telegram.chatOf(participantId)) !== undefined,
  };
}
