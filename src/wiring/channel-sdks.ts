/**
 * The channels whose SDKs are imported only when enabled (they are the largest dependencies in memory): WhatsApp
 * Web's socket (Baileys) and its connection lease, and the Telegram bot (grammY).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TelegramChannel } from '../channels/telegram/telegram-channel.ts';
import { type ConnectionLease, createInProcessLease } from '../channels/whatsapp-web/connection-lease.ts';
import type { WhatsAppSocketFactory } from '../channels/whatsapp-web/whatsapp-socket.ts';
import { DEFAULT_WHATSAPP_SESSION } from '../channels/whatsapp-web/whatsapp-web-channel.ts';
import type { Config, TelegramSettings } from '../config.ts';
import type { Log } from '../domain/log.ts';

/** How long a webhook gateway may take to accept one outbound message. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * The WhatsApp Web socket: Baileys, or — TESTS ONLY — the `createWhatsAppSocket` export of the module named by
 * `PROMPTPIPE_WHATSAPP_WEB_SOCKET_MODULE` (the end-to-end test runs the real server process against a fake).
 */
export async function loadWhatsAppSocketFactory(config: Config, log: Log): Promise<WhatsAppSocketFactory> {
  const modulePath = config.channel.whatsappWebSocketModule;
  // Baileys is imported only when the channel is enabled (it is the largest dependency in memory).
  if (!modulePath) return (await import('../channels/whatsapp-web/baileys-socket.ts')).createBaileysSocket;
  log.warn({ module: modulePath }, 'whatsapp-web: TEST socket module in use (PROMPTPIPE_WHATSAPP_WEB_SOCKET_MODULE)');
  const loaded = (await import(pathToFileURL(resolve(modulePath)).href)) as { createWhatsAppSocket?: unknown };
  if (typeof loaded.createWhatsAppSocket !== 'function') {
    throw new Error(`${modulePath} does not export a createWhatsAppSocket function`);
  }
  return loaded.createWhatsAppSocket as WhatsAppSocketFactory;
}

/** One instance holds the WhatsApp connection: an advisory lock on PostgreSQL; in-process on SQLite. */
export async function createWhatsAppLease(config: Config, log: Log): Promise<ConnectionLease> {
  const { databaseUrl } = config.storage;
  if (!databaseUrl) return createInProcessLease();
  const { createPostgresConnectionLease } = await import('../channels/whatsapp-web/postgres-connection-lease.ts');
  return createPostgresConnectionLease({
    connectionString: databaseUrl,
    name: `promptpipe:whatsapp-web:${DEFAULT_WHATSAPP_SESSION}`,
    onError: (error) => log.error({ error: error.message }, 'whatsapp-web: connection lease database error'),
  });
}

/** The telegram channel; grammY is imported only when it is enabled, like the other channel SDKs. */
export async function loadTelegramChannel(
  settings: TelegramSettings,
  fetch: typeof globalThis.fetch,
  parts: Omit<
    Parameters<typeof import('../channels/telegram/telegram-channel.ts').createTelegramChannel>[0],
    'api' | 'mode' | 'webhookSecret'
  >,
): Promise<TelegramChannel> {
  const [{ createTelegramBotApi }, { createTelegramChannel }] = await Promise.all([
    import('../channels/telegram/telegram-bot-api.ts'),
    import('../channels/telegram/telegram-channel.ts'),
  ]);
  return createTelegramChannel({
    ...parts,
    api: createTelegramBotApi({
      token: settings.botToken,
      apiUrl: settings.apiUrl,
      timeoutMs: WEBHOOK_TIMEOUT_MS,
      fetch,
    }),
    mode: settings.mode,
    webhookSecret: settings.webhookSecret,
  });
}
