/**
 * The telegram channel in process: the API harness (SQLite in memory, manual clock, inbound pipeline with the fake
 * flow) with the channel's webhook route, the channel on grammY against the fake Bot API, and helpers that act as a
 * Telegram user through the real webhook (or hand updates to the channel for long polling).
 */
import { createTelegramBotApi } from '../../../src/channels/telegram/telegram-bot-api.ts';
import { createTelegramChannel, type TelegramChannel } from '../../../src/channels/telegram/telegram-channel.ts';
import {
  createTelegramRoutes,
  TELEGRAM_SECRET_HEADER,
  TELEGRAM_WEBHOOK_PATH,
} from '../../../src/channels/telegram/telegram-webhook-route.ts';
import { createBuiltInMessageCatalogue } from '../../../src/i18n/built-in-catalogues.ts';
import { silentLog } from '../../../src/observability/log.ts';
import { type ApiHarness, createApiHarness } from '../../support/api-harness.ts';
import { type FakeTelegramBotApi, startFakeTelegramBotApi } from '../../support/fake-telegram-bot-api.ts';
import type { Json } from '../../support/fake-telegram-shapes.ts';

export const BOT_TOKEN = '123456789:AAtelegram-harness-token';
export const WEBHOOK_SECRET = 'harness-webhook-secret';
export const PUBLIC_URL = 'https://coach.example.org';

export interface TelegramHarness {
  harness: ApiHarness;
  api: FakeTelegramBotApi;
  channel: TelegramChannel;
  /** Participants withdrawn by blocking the bot (what main.ts wires to the opt-out). */
  blocked: string[];
  /** Posts an update to the webhook route as Telegram does (with the secret, or `secret` instead); the status. */
  post(update: Json, secret?: string): Promise<number>;
  close(): Promise<void>;
}

export async function startTelegramHarness(options: { mode?: 'webhook' | 'polling' } = {}): Promise<TelegramHarness> {
  const api = await startFakeTelegramBotApi({ token: BOT_TOKEN });
  const blocked: string[] = [];
  const holder: { channel?: TelegramChannel } = {};
  const harness = await createApiHarness({
    extraChannelRoutes: ({ inbound, store, clock }) => {
      const channel = createTelegramChannel({
        api: createTelegramBotApi({ token: BOT_TOKEN, apiUrl: api.url, timeoutMs: 5_000 }),
        mode: options.mode ?? 'webhook',
        webhookSecret: WEBHOOK_SECRET,
        publicUrl: PUBLIC_URL,
        store,
        clock,
        log: silentLog,
        messages: createBuiltInMessageCatalogue(),
        onJobEnqueued: () => {},
      });
      channel.attach({
        inbound,
        onBlocked: async (participantId) => {
          blocked.push(participantId);
        },
      });
      holder.channel = channel;
      return [createTelegramRoutes({ secret: WEBHOOK_SECRET, handleUpdate: (update) => channel.handleUpdate(update) })];
    },
  });
  const channel = holder.channel as TelegramChannel;
  await channel.start?.();
  return {
    harness,
    api,
    channel,
    blocked,
    async post(update, secret = WEBHOOK_SECRET) {
      const response = await harness.call('POST', TELEGRAM_WEBHOOK_PATH, update, { [TELEGRAM_SECRET_HEADER]: secret });
      return response.statusCode;
    },
    async close() {
      await channel.stop?.();
      await api.close();
      await harness.close();
    },
  };
}
