/**
 * The channel adapters: one per enabled channel, in `PROMPTPIPE_CHANNEL` order (the first is the default), or the one
 * the caller passes (the console chat). WhatsApp Web's Baileys and Telegram's grammY are imported only when enabled.
 */
import type { Channel } from '../channels/channel.ts';
import { type ChannelRegistry, createChannelRegistry } from '../channels/channel-registry.ts';
import { createConsoleChannel } from '../channels/console/console-channel.ts';
import type { TelegramChannel } from '../channels/telegram/telegram-channel.ts';
import { TELEGRAM_CHANNEL } from '../channels/telegram/telegram-inbound.ts';
import { createTwilioChannel } from '../channels/twilio/twilio-channel.ts';
import { createWebChatChannel } from '../channels/web-chat/web-chat-channel.ts';
import { createWebhookChannel } from '../channels/webhook/webhook-channel.ts';
import { graphApiVersionWarning } from '../channels/whatsapp-cloud/graph-api-versions.ts';
import { createWhatsAppCloudChannel } from '../channels/whatsapp-cloud/whatsapp-cloud-channel.ts';
import {
  createWhatsAppWebChannel,
  WHATSAPP_WEB_CHANNEL,
  type WhatsAppWebChannel,
} from '../channels/whatsapp-web/whatsapp-web-channel.ts';
import type { Config, TelegramSettings } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { Log } from '../domain/log.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import { systemClock } from '../scheduling/clock.ts';
import type { Store } from '../store/store.ts';
import type { Core } from './application.ts';
import {
  createWhatsAppLease,
  loadTelegramChannel,
  loadWhatsAppSocketFactory,
  WEBHOOK_TIMEOUT_MS,
} from './channel-sdks.ts';

export interface ChannelSet {
  channels: ChannelRegistry;
  /** The default channel. */
  channel: Channel;
  whatsappWebChannel: WhatsAppWebChannel | undefined;
  telegramChannel: TelegramChannel | undefined;
  /** Only when the telegram channel came from the configuration. */
  telegramSettings: TelegramSettings | undefined;
}

export async function wireChannels(
  core: Core,
  fetch: typeof globalThis.fetch,
  messages: MessageCatalogue,
  injected: Channel | undefined,
): Promise<ChannelSet> {
  const { config, log, store, clock, notifyRunner } = core;
  const whatsappSocketFactory = config.channel.enabled.includes(WHATSAPP_WEB_CHANNEL)
    ? await loadWhatsAppSocketFactory(config, log)
    : undefined;
  const whatsappLease = whatsappSocketFactory ? await createWhatsAppLease(config, log) : undefined;
  const createWhatsAppWeb =
    whatsappSocketFactory && whatsappLease
      ? () =>
          createWhatsAppWebChannel({ store, clock, log, socketFactory: whatsappSocketFactory, lease: whatsappLease })
      : undefined;
  const telegramSettings = injected ? undefined : config.channel.telegram;
  const telegramChannel = telegramSettings
    ? await loadTelegramChannel(telegramSettings, fetch, {
        publicUrl: config.publicUrl,
        store,
        clock,
        log,
        messages,
        onJobEnqueued: notifyRunner,
      })
    : undefined;
  const channels = createChannelRegistry(
    injected
      ? [injected]
      : createConfiguredChannels(config, log, store, clock, fetch, createWhatsAppWeb, telegramChannel, messages),
  );
  const whatsappWebChannel = channels.all().find(isWhatsAppWebChannel);
  return { channels, channel: channels.defaultChannel, whatsappWebChannel, telegramChannel, telegramSettings };
}

/** One adapter per enabled channel, in `PROMPTPIPE_CHANNEL` order (the first is the default). */
function createConfiguredChannels(
  config: Config,
  log: Log,
  store: Store,
  clock: Clock,
  fetch: typeof globalThis.fetch,
  whatsappWeb?: () => Channel,
  telegram?: Channel,
  messages?: MessageCatalogue,
): Channel[] {
  return config.channel.enabled.map((name) => {
    if (name === WHATSAPP_WEB_CHANNEL && whatsappWeb) return whatsappWeb();
    if (name === TELEGRAM_CHANNEL && telegram) return telegram;
    const twilio = config.channel.twilio;
    if (name === 'twilio' && twilio) {
      return createTwilioChannel({
        ...twilio,
        lastInboundAt: (participantId) => store.inbound.lastReceivedAt(participantId, 'twilio'),
        clock,
        timeoutMs: WEBHOOK_TIMEOUT_MS,
        log,
        fetch,
        ...(messages ? { messages } : {}),
      });
    }
    const whatsappCloud = config.channel.whatsappCloud;
    if (name === 'whatsapp-cloud' && whatsappCloud) {
      // Meta's end dates are real dates, whatever clock the study runs on.
      const versionWarning = graphApiVersionWarning(whatsappCloud.apiUrl, systemClock.now());
      if (versionWarning) log.warn({ apiUrl: whatsappCloud.apiUrl }, versionWarning);
      return createWhatsAppCloudChannel({
        ...whatsappCloud,
        lastInboundAt: (participantId) => store.inbound.lastReceivedAt(participantId, 'whatsapp-cloud'),
        clock,
        timeoutMs: WEBHOOK_TIMEOUT_MS,
        log,
        fetch,
        ...(messages ? { messages } : {}),
      });
    }
    if (name === 'console') {
      log.warn({}, 'console channel: coach messages are printed on stdout; talk to the coach with `promptpipe chat`');
      return createConsoleChannel({ output: process.stdout });
    }
    if (name === 'webchat') {
      log.info({}, 'webchat channel: each participant talks to the coach at /chat/<token> (link on the dashboard)');
      return createWebChatChannel();
    }
    return createConfiguredWebhookChannel(config, log, fetch);
  });
}

function createConfiguredWebhookChannel(config: Config, log: Log, fetch: typeof globalThis.fetch): Channel {
  const { webhookUrl, webhookSecret } = config.channel;
  if (webhookUrl) {
    log.info({ url: webhookUrl, signed: Boolean(webhookSecret) }, `webhook channel: delivering to ${webhookUrl}`);
  } else {
    log.warn(
      {},
      'webhook channel: PROMPTPIPE_WEBHOOK_URL is not set, so outbound messages are only recorded (see each ' +
        "participant's history), never delivered",
    );
  }
  return createWebhookChannel({
    url: webhookUrl,
    secret: webhookSecret,
    timeoutMs: WEBHOOK_TIMEOUT_MS,
    log,
    clock: systemClock,
    fetch,
  });
}

function isWhatsAppWebChannel(channel: Channel): channel is WhatsAppWebChannel {
  return channel.name === WHATSAPP_WEB_CHANNEL && 'attachInbound' in channel;
}
