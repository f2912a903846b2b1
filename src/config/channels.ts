/**
 * The channels' settings: which are enabled (`PROMPTPIPE_CHANNEL`), the webhook gateway, opt-out words, and each
 * provider's credentials and templates, read only when its channel is enabled. Plain settings: the adapters map them.
 */
import type { TemplateCatalogue } from '../domain/message-templates.ts';
import type { ConfigReader } from './reader.ts';
import {
  TWILIO_CONTENT_SID_PREFIX,
  twilioContentTemplateSettings,
  type WhatsAppTemplate,
  whatsAppTemplateSettings,
} from './templates.ts';

/** The channels this build can run, by `PROMPTPIPE_CHANNEL` name. */
export const CHANNEL_NAMES = [
  'webhook',
  'console',
  'whatsapp-cloud',
  'twilio',
  'webchat',
  'whatsapp-web',
  'telegram',
] as const;
export type ChannelName = (typeof CHANNEL_NAMES)[number];

/** WhatsApp Cloud API settings (`WHATSAPP_CLOUD_*`). */
export interface WhatsAppCloudSettings {
  accessToken: string;
  phoneNumberId: string;
  appSecret: string;
  verifyToken: string;
  /** The Graph API base URL with its version, no trailing slash. */
  apiUrl: string;
  /** The approved template sent outside the 24-hour window; without it such messages fail. */
  templateName: string | undefined;
  templateLanguage: string;
  /**
   * More templates by kind and language: the polls' quick-reply templates (`WHATSAPP_CLOUD_DONE_POLL_TEMPLATE_NAME`,
   * `WHATSAPP_CLOUD_INTENSITY_POLL_TEMPLATE_NAME`) and `WHATSAPP_CLOUD_TEMPLATES_FILE`; absent when none is set.
   */
  templates?: TemplateCatalogue<WhatsAppTemplate>;
}

/** Twilio settings (`TWILIO_*`). */
export interface TwilioSettings {
  accountSid: string;
  authToken: string;
  /** E.164 or `whatsapp:+…`; or a messaging service instead. */
  from: string | undefined;
  messagingServiceSid: string | undefined;
  /** The externally visible base URL (no trailing slash): signatures and the status callback URL. */
  publicUrl: string;
  apiUrl: string;
  /**
   * WhatsApp Content Templates (`HX…`) by kind and language, sent outside the 24-hour window (`TWILIO_CONTENT_SID_*`,
   * `TWILIO_CONTENT_TEMPLATES_FILE`); absent when none is set.
   */
  contentTemplates?: TemplateCatalogue<string>;
}

/** Telegram bot settings (`TELEGRAM_*`). */
export interface TelegramSettings {
  botToken: string;
  /** `webhook`: Telegram posts to `/channels/telegram/webhook`; `polling`: `getUpdates` (no public URL needed). */
  mode: 'webhook' | 'polling';
  /** Checked on every webhook request (`X-Telegram-Bot-Api-Secret-Token`); required in webhook mode. */
  webhookSecret: string | undefined;
  /** The Bot API server, no trailing slash. */
  apiUrl: string;
}

export const DEFAULT_TELEGRAM_API_URL = 'https://api.telegram.org';
/** The Graph API version a new deployment uses: the newest whose end date Meta has published (graph-api-versions.ts). */
export const DEFAULT_GRAPH_API_VERSION = 'v25.0';
export const DEFAULT_WHATSAPP_CLOUD_API_URL = `https://graph.facebook.com/${DEFAULT_GRAPH_API_VERSION}`;
export const DEFAULT_TWILIO_API_URL = 'https://api.twilio.com';

/** The usual carrier opt-out words; a message that is exactly one of them (any case, spaces ignored) opts out. */
export const DEFAULT_OPT_OUT_KEYWORDS = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT'] as const;
export const DEFAULT_OPT_IN_KEYWORDS = ['START'] as const;
export type { WhatsAppTemplate } from './templates.ts';

export interface ChannelSettings {
  /** The enabled channels, in `PROMPTPIPE_CHANNEL` order. */
  enabled: readonly ChannelName[];
  /** The default channel: the first enabled one. */
  kind: ChannelName;
  webhookUrl: string | undefined;
  webhookSecret: string | undefined;
  /**
   * `PROMPTPIPE_WEBHOOK_TOLERANCE`: how far a signed inbound request's `X-PromptPipe-Timestamp`, or a message's own
   * `timestamp`, may be from the server's time; anything older (a replay) or further ahead is refused.
   */
  webhookToleranceMs: number;
  /** Upper-case messages that withdraw a participant (`OPT_OUT_KEYWORDS`). */
  optOutKeywords: readonly string[];
  /** Upper-case messages that bring an opted-out participant back. */
  optInKeywords: readonly string[];
  /** Read only when `whatsapp-cloud` is enabled. */
  whatsappCloud?: WhatsAppCloudSettings;
  /** Read only when `twilio` is enabled. */
  twilio?: TwilioSettings;
  /** Read only when `telegram` is enabled. */
  telegram?: TelegramSettings;
  /** TEST ONLY (`PROMPTPIPE_WHATSAPP_WEB_SOCKET_MODULE`): a module whose `createWhatsAppSocket` replaces Baileys. */
  whatsappWebSocketModule: string | undefined;
}

export function readChannelSettings(read: ConfigReader): ChannelSettings {
  const webhookUrl = read.string('PROMPTPIPE_WEBHOOK_URL');
  if (webhookUrl && !URL.canParse(webhookUrl)) {
    read.problems.push(`PROMPTPIPE_WEBHOOK_URL must be a URL (got "${webhookUrl}")`);
  }
  const channels = read.channelList('PROMPTPIPE_CHANNEL', CHANNEL_NAMES, 'webhook');
  return {
    enabled: channels,
    kind: channels[0] ?? 'webhook',
    webhookUrl,
    webhookSecret: read.string('PROMPTPIPE_WEBHOOK_SECRET'),
    webhookToleranceMs: read.duration('PROMPTPIPE_WEBHOOK_TOLERANCE', '5m'),
    optOutKeywords: read.keywords('OPT_OUT_KEYWORDS', DEFAULT_OPT_OUT_KEYWORDS),
    optInKeywords: read.keywords('OPT_IN_KEYWORDS', DEFAULT_OPT_IN_KEYWORDS),
    ...(channels.includes('whatsapp-cloud') ? { whatsappCloud: readWhatsAppCloudSettings(read) } : {}),
    ...(channels.includes('twilio') ? { twilio: readTwilioSettings(read) } : {}),
    ...(channels.includes('telegram') ? { telegram: readTelegramSettings(read) } : {}),
    whatsappWebSocketModule: read.string('PROMPTPIPE_WHATSAPP_WEB_SOCKET_MODULE'),
  };
}

function readWhatsAppCloudSettings(read: ConfigReader): WhatsAppCloudSettings {
  const channel = 'whatsapp-cloud';
  const templateName = read.string('WHATSAPP_CLOUD_TEMPLATE_NAME');
  const templateLanguage = read.string('WHATSAPP_CLOUD_TEMPLATE_LANGUAGE') ?? 'en_US';
  const templates = whatsAppTemplateSettings(
    {
      donePollTemplate: read.string('WHATSAPP_CLOUD_DONE_POLL_TEMPLATE_NAME'),
      intensityPollTemplate: read.string('WHATSAPP_CLOUD_INTENSITY_POLL_TEMPLATE_NAME'),
      templateLanguage,
      file: read.jsonFile('WHATSAPP_CLOUD_TEMPLATES_FILE'),
    },
    read.problems,
  );
  return {
    accessToken: read.required('WHATSAPP_CLOUD_ACCESS_TOKEN', channel),
    phoneNumberId: read.required('WHATSAPP_CLOUD_PHONE_NUMBER_ID', channel),
    appSecret: read.required('WHATSAPP_CLOUD_APP_SECRET', channel),
    verifyToken: read.required('WHATSAPP_CLOUD_VERIFY_TOKEN', channel),
    apiUrl: read.url('WHATSAPP_CLOUD_API_URL', DEFAULT_WHATSAPP_CLOUD_API_URL),
    templateName,
    templateLanguage,
    ...(templates ? { templates } : {}),
  };
}

function readTwilioSettings(read: ConfigReader): TwilioSettings {
  const channel = 'twilio';
  const from = read.string('TWILIO_FROM');
  const messagingServiceSid = read.string('TWILIO_MESSAGING_SERVICE_SID');
  if (from === undefined && messagingServiceSid === undefined) {
    read.problems.push(
      'TWILIO_FROM or TWILIO_MESSAGING_SERVICE_SID is required when PROMPTPIPE_CHANNEL includes twilio',
    );
  }
  const publicUrl = read.required('TWILIO_PUBLIC_URL', channel);
  if (publicUrl && !URL.canParse(publicUrl)) read.problems.push(`TWILIO_PUBLIC_URL must be a URL (got "${publicUrl}")`);
  const contentTemplates = twilioContentTemplateSettings(
    {
      contentSids: read.startingWith(TWILIO_CONTENT_SID_PREFIX),
      file: read.jsonFile('TWILIO_CONTENT_TEMPLATES_FILE'),
    },
    read.problems,
  );
  if (contentTemplates && !from?.toLowerCase().startsWith('whatsapp:')) {
    read.problems.push(
      'TWILIO_CONTENT_SID_* and TWILIO_CONTENT_TEMPLATES_FILE need a WhatsApp sender (TWILIO_FROM=whatsapp:+…)',
    );
  }
  return {
    accountSid: read.required('TWILIO_ACCOUNT_SID', channel),
    authToken: read.required('TWILIO_AUTH_TOKEN', channel),
    from,
    messagingServiceSid,
    publicUrl: publicUrl.replace(/\/+$/, ''),
    apiUrl: read.url('TWILIO_API_URL', DEFAULT_TWILIO_API_URL),
    ...(contentTemplates ? { contentTemplates } : {}),
  };
}

function readTelegramSettings(read: ConfigReader): TelegramSettings {
  const botToken = read.required('TELEGRAM_BOT_TOKEN', 'telegram');
  // The token's shape is checked here (without showing it): a wrong one would otherwise surface as a 404 at getMe.
  if (botToken && !/^\d+:[A-Za-z0-9_-]+$/.test(botToken)) {
    read.problems.push('TELEGRAM_BOT_TOKEN must look like 123456789:AA... (the token @BotFather gave)');
  }
  const mode = read.oneOf('TELEGRAM_MODE', ['webhook', 'polling'] as const, 'webhook');
  const webhookSecret = read.string('TELEGRAM_WEBHOOK_SECRET');
  if (mode === 'webhook' && webhookSecret === undefined) {
    read.problems.push(
      'TELEGRAM_WEBHOOK_SECRET is required with TELEGRAM_MODE=webhook (or set TELEGRAM_MODE=polling on a machine ' +
        'without a public URL)',
    );
  }
  // Telegram's own rule for secret_token; it checks it only at setWebhook, long after start-up.
  if (webhookSecret !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(webhookSecret)) {
    read.problems.push('TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z, a-z, 0-9, _ and -');
  }
  return { botToken, mode, webhookSecret, apiUrl: read.url('TELEGRAM_API_URL', DEFAULT_TELEGRAM_API_URL) };
}
