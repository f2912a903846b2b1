/**
 * The only reader of process.env. Reads the environment (and an optional `.env` file), validates it, and returns
 * a frozen, typed configuration. Every setting is documented in README.md and `.env.example`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import type { TemplateCatalogue } from './channels/outside-window/message-templates.ts';
import {
  type TemplateFile,
  TWILIO_CONTENT_SID_PREFIX,
  twilioContentTemplateSettings,
  whatsAppTemplateSettings,
} from './channels/outside-window/template-settings.ts';
import { DEFAULT_WHATSAPP_CLOUD_API_URL } from './channels/whatsapp-cloud/graph-api-versions.ts';
import type { WhatsAppTemplate } from './channels/whatsapp-cloud/whatsapp-cloud-messages.ts';
import { parseDuration } from './domain/duration.ts';
import { AppError } from './domain/errors.ts';
import { canonicalLanguageTag } from './domain/language.ts';
import type { HttpProxySettings } from './http/http-client.ts';
import { TOOL_PROTOCOLS, ToolProtocol } from './llm/text-tool-protocol.ts';
import { type OriginalSchedule, parseCronSchedule } from './original/original-schedule.ts';
import { applyOriginalSettingNames, unreadSettingNotes } from './original/original-settings.ts';
import { readSafetySettings, type SafetySettings } from './safety/safety-settings.ts';
import type { SqliteSynchronous } from './store/sqlite/sqlite-store.ts';

export interface Config {
  api: { host: string; port: number; token: string | undefined; bodyLimitBytes: number };
  /**
   * `PROMPTPIPE_PUBLIC_URL`: the server's externally visible base URL (http or https, no trailing slash), e.g.
   * `https://coach.example.org`. Web-chat links (`chat_url`) are absolute with it; an https URL makes the dashboard's
   * session cookie `Secure`.
   */
  publicUrl: string | undefined;
  dashboard: {
    /** `DASHBOARD_SESSION_IDLE_TIMEOUT`: a dashboard session unused this long is signed out. */
    sessionIdleTimeoutMs: number;
  };
  storage: {
    stateDir: string;
    databaseUrl: string | undefined;
    /**
     * When SQLite commits reach the disk (`SQLITE_SYNCHRONOUS`): `group` (default) syncs before anything is
     * acknowledged or sent; `full` syncs every commit; `normal` only at checkpoints. See sqlite-store.ts.
     */
    sqliteSynchronous: SqliteSynchronous;
    /** `DATABASE_POOL_SIZE`: pooled PostgreSQL connections of this instance (plus one for coordination). */
    poolSize: number;
    /**
     * TEST ONLY (`PROMPTPIPE_TEST_DASHBOARD_READ_GATE`, made absolute): on SQLite, the dashboard's reads wait while this
     * file exists (on their worker thread), so a test can show a turn completing during a slow dashboard read.
     */
    dashboardReadGate: string | undefined;
  };
  llm: {
    apiKey: string | undefined;
    baseUrl: string | undefined;
    model: string;
    /** `GENAI_TEMPERATURE`: unset → 0.1; set but empty → undefined (omitted, for reasoning models). */
    temperature: number | undefined;
    timeoutMs: number;
    maxRetries: number;
    maxConcurrency: number;
    /** `LLM_TOOL_PROTOCOL`: `native` tool calling or the `<tool_call>` text protocol. */
    toolProtocol: ToolProtocol;
    /** `LLM_MAX_TOKENS`: sent as `max_tokens` when set. */
    maxTokens: number | undefined;
    /** `LLM_EXTRA_BODY`: a JSON object merged into every request body. */
    extraBody: Record<string, unknown> | undefined;
    /** `LLM_OUTAGE_RETRY_FOR`: how long a turn whose model call failed is retried before its message fails. */
    outageRetryForMs: number;
    /**
     * `LLM_OUTAGE_NOTICE`: the one message per outage, the same in every language; '' = no notice; unset = the
     * catalogue's `reply.outageNotice` in the participant's language.
     */
    outageNotice: string | undefined;
    /** `LLM_CIRCUIT_BREAKER_THRESHOLD`: consecutive failed calls that open the breaker. */
    circuitBreakerThreshold: number;
    /** `LLM_CIRCUIT_BREAKER_COOLDOWN`: how long an open breaker refuses calls before letting one through. */
    circuitBreakerCooldownMs: number;
  };
  prompts: {
    intakeFile: string | undefined;
    feedbackFile: string | undefined;
    promptGeneratorFile: string | undefined;
  };
  conversation: { chatHistoryLimit: number; debug: boolean; autoEnrollNewUsers: boolean; defaultCountry: string };
  scheduling: {
    clock: 'system' | 'manual';
    /** Start instant of the manual clock (defaults to the real time at start-up). */
    clockStart: Date | undefined;
    prepTimeMinutes: number;
    dailyPromptReminderDelayMs: number;
    autoFeedbackAfterPromptEnabled: boolean;
    feedbackInitialTimeoutMs: number;
    feedbackFollowupDelayMs: number;
    idleAfterUnanswered: number;
    idlePausesPrompts: boolean;
    missedPromptGraceMs: number;
  };
  channel: {
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
  };
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  http: {
    /**
     * `NODE_USE_ENV_PROXY=1`: outbound calls (the model, the providers) go through `HTTP_PROXY` / `HTTPS_PROXY`, except
     * to the hosts of `NO_PROXY`, as Node's own fetch does with that setting. Undefined: no proxy.
     */
    proxy: HttpProxySettings | undefined;
  };
  /** Research data (issue 8): export pseudonyms, paced greetings and broadcasts. */
  research: {
    /** `EXPORT_PSEUDONYM_KEY`: HMAC key of `export --pseudonymize`; required with that flag. */
    exportPseudonymKey: string | undefined;
    /** `ENROLL_GREETING_RATE`: greetings of a bulk import sent per minute. */
    enrollGreetingRate: number;
    /** `BROADCAST_RATE`: broadcast messages sent per minute. */
    broadcastRate: number;
    /** `EVAL_REPORTS_DIR`: where the dashboard finds `promptpipe eval` runs to rate (default `eval-report`). */
    evalReportsDir: string;
  };
  /** `DEFAULT_LANGUAGE` (canonical BCP 47 tag) and `MESSAGE_CATALOGUE_DIR` (a study's own catalogues). */
  language: { defaultLanguage: string; catalogueDir: string | undefined };
  /** `STUDY_DESIGN_FILE`: a randomised trial's design (YAML or JSON), validated at start-up; unset: one implicit arm. */
  study: { designFile: string | undefined };
  /** The original PromptPipe's API (docs/api.md): `DEFAULT_SCHEDULE`, for `POST /schedule` without a schedule. */
  originalApi: { defaultSchedule: OriginalSchedule | undefined };
  /** Risk detection, safety messages and staff alert routes (safety/safety-settings.ts, docs/safety.md). */
  safety: SafetySettings;
  /**
   * Said once at start-up (warnings): the original PromptPipe's settings and flags read as PromptPipe's, and settings
   * that are set but not read (misspelt, or for a channel that is off).
   */
  startupNotes: readonly string[];
  /** Several instances on one PostgreSQL (docs/deployment.md). */
  cluster: {
    /** `PROMPTPIPE_INSTANCE_ID`: names this process in /health, logs and job leases. Default hostname-pid. */
    instanceId: string;
    /**
     * `PROMPTPIPE_JOB_LEASE`: how long a claimed job belongs to its instance without a renewal (renewed every third of
     * it, at least every 10 s, while the job runs) before another may take it over. Default 30 s; at least 3 s.
     */
    jobLeaseMs: number;
    /** `PROMPTPIPE_RECOVERY_INTERVAL`: how often unprocessed inbound messages left by a dead instance are looked for. */
    recoveryIntervalMs: number;
  };
}

export type Environment = Readonly<Record<string, string | undefined>>;

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
export { DEFAULT_WHATSAPP_CLOUD_API_URL };
export const DEFAULT_TWILIO_API_URL = 'https://api.twilio.com';

/** The usual carrier opt-out words; a message that is exactly one of them (any case, spaces ignored) opts out. */
export const DEFAULT_OPT_OUT_KEYWORDS = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT'] as const;
export const DEFAULT_OPT_IN_KEYWORDS = ['START'] as const;
/** The shortest `PROMPTPIPE_JOB_LEASE`: its renewal every third of it is then still once a second. */
export const MINIMUM_JOB_LEASE_MS = 3_000;

/** process.env over the optional `.env` file of the working directory (the real environment wins). */
/**
 * `PROMPTPIPE_ENV_FILE` names another file, or none when set empty (tests, containers: only the real environment
 * counts). A named file that does not exist is an error; the default `.env` is optional.
 */
export function readEnvironment(envFile?: string): Environment {
  const named = envFile ?? process.env.PROMPTPIPE_ENV_FILE;
  const path = named ?? '.env';
  if (path === '') return { ...process.env };
  if (named !== undefined && !existsSync(path)) {
    throw new AppError('invalid_input', `PROMPTPIPE_ENV_FILE: ${path} does not exist (set it empty to read no file)`);
  }
  // Node's own parser: the dotenv syntax (quotes, comments, `export`, multi-line values in double quotes).
  const fromFile = existsSync(path) ? parseEnv(readFileSync(path, 'utf8')) : {};
  return { ...fromFile, ...process.env };
}

class ConfigReader {
  readonly problems: string[] = [];
  private readonly env: Environment;

  /** Every name looked up: a setting that is set but never read is reported (`unreadSettingNotes`). */
  readonly names = new Set<string>();

  /** The environment as given, for the variables other programs share (`shared`). */
  private readonly untracked: Environment;

  constructor(env: Environment) {
    this.untracked = env;
    this.env = new Proxy(env, {
      get: (target, name) => {
        if (typeof name === 'string') this.names.add(name);
        return Reflect.get(target, name);
      },
    });
  }

  string(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value ? value : undefined;
  }

  /**
   * A variable other programs read too (`NODE_USE_ENV_PROXY`, `HTTP_PROXY`): not one of our settings, so it is not
   * counted as read, or every `NODE_*` and `HTTP*` variable would be reported as a setting set but not read.
   */
  shared(name: string): string | undefined {
    const value = this.untracked[name]?.trim();
    return value ? value : undefined;
  }

  boolean(name: string, fallback: boolean): boolean {
    const value = this.string(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    this.problems.push(`${name} must be true or false (got "${value}")`);
    return fallback;
  }

  number(name: string, fallback: number, check: (value: number) => boolean, expected: string): number {
    const value = this.string(name);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || !check(parsed)) {
      this.problems.push(`${name} must be ${expected} (got "${value}")`);
      return fallback;
    }
    return parsed;
  }

  duration(name: string, fallback: string): number {
    const value = this.string(name) ?? fallback;
    const parsed = parseDuration(value);
    if (parsed === undefined) {
      this.problems.push(`${name} must be a duration such as 15m, 3h or 1h30m (got "${value}")`);
      return parseDuration(fallback) ?? 0;
    }
    return parsed;
  }

  /** A comma-separated list of names from `allowed`, without repeats; at least one. */
  channelList<T extends string>(name: string, allowed: readonly T[], fallback: T): T[] {
    const value = this.string(name);
    if (value === undefined) return [fallback];
    const names = value
      .split(',')
      .map((part) => part.trim().toLowerCase())
      .filter((part) => part !== '');
    const unknown = names.filter((part) => !(allowed as readonly string[]).includes(part));
    if (unknown.length > 0 || names.length === 0) {
      this.problems.push(
        `${name} must be a comma-separated list of ${allowed.join(', ')} (got "${value}"${unknown.length > 0 ? `; unknown: ${unknown.join(', ')}` : ''})`,
      );
      return [fallback];
    }
    if (new Set(names).size !== names.length) this.problems.push(`${name} lists a channel twice (got "${value}")`);
    return [...new Set(names)] as T[];
  }

  /** A comma-separated list of words, compared case-insensitively (stored upper-case). */
  keywords(name: string, fallback: readonly string[]): string[] {
    const value = this.string(name);
    if (value === undefined) return [...fallback];
    const words = value
      .split(',')
      .map((word) => word.replace(/\s+/g, '').toUpperCase())
      .filter((word) => word !== '');
    if (words.length === 0) this.problems.push(`${name} must list at least one word (got "${value}")`);
    return words;
  }

  /** The names of the set variables that start with `prefix` (`TWILIO_CONTENT_SID_`), with their values. */
  startingWith(prefix: string): [string, string][] {
    // Object.keys does not go through the read-tracking `get`: only the names found are marked read, by `string`.
    return Object.keys(this.env)
      .filter((name) => name.startsWith(prefix))
      .flatMap((name) => {
        const value = this.string(name);
        return value === undefined ? [] : [[name, value] as [string, string]];
      });
  }

  /** The JSON of the file a variable names, or why it could not be read; undefined when the variable is unset. */
  jsonFile(name: string): TemplateFile | undefined {
    const path = this.string(name);
    if (path === undefined) return undefined;
    try {
      return { variable: name, path, json: JSON.parse(readFileSync(path, 'utf8')) as unknown };
    } catch (error) {
      return { variable: name, path, json: undefined, error: error instanceof Error ? error.message : String(error) };
    }
  }

  /** True when the variable is present but blank (an explicit "off" / "omit"). */
  isBlank(name: string): boolean {
    const value = this.env[name];
    return value !== undefined && value.trim() === '';
  }

  /** The raw text, untrimmed inside; `fallback` only when the variable is absent (blank stays ''). */
  text(name: string, fallback: string): string {
    const value = this.env[name];
    return value === undefined ? fallback : value.trim();
  }

  /** The raw text (trimmed), '' when set blank, undefined only when the variable is absent. */
  optionalText(name: string): string | undefined {
    return this.env[name]?.trim();
  }

  /** A JSON object, or undefined when unset; anything else is a start-up problem naming the variable. */
  jsonObject(name: string): Record<string, unknown> | undefined {
    const value = this.string(name);
    if (value === undefined) return undefined;
    try {
      const parsed: unknown = JSON.parse(value);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
        return parsed as Record<string, unknown>;
      }
      this.problems.push(`${name} must be a JSON object such as {"top_k": 20} (got "${value}")`);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.problems.push(`${name} must be valid JSON (a JSON object): ${reason}`);
    }
    return undefined;
  }

  /** A setting an enabled channel cannot do without. */
  required(name: string, channel: string): string {
    const value = this.string(name);
    if (value === undefined) this.problems.push(`${name} is required when PROMPTPIPE_CHANNEL includes ${channel}`);
    return value ?? '';
  }

  url(name: string, fallback: string): string {
    const value = this.string(name) ?? fallback;
    if (!URL.canParse(value)) this.problems.push(`${name} must be a URL (got "${value}")`);
    return value.replace(/\/+$/, '');
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.string(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${value}")`);
    return fallback;
  }
}

/** Splits `API_ADDR` (":8080", "127.0.0.1:8080", "[::1]:8080", "8080") into host and port. */
export function parseListenAddress(address: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]:|([^:]*):)?(\d+)$/.exec(address.trim());
  if (!match) return undefined;
  const port = Number(match[3]);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) return undefined;
  const host = match[1] ?? match[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port };
}

/**
 * Validates the environment. Throws `AppError('invalid_input')` listing every problem at once. `notes` are added to
 * the start-up notes (the CLI's, for the original's flags); `fileExists` finds the original's prompt files.
 */
export function loadConfig(
  env: Environment,
  options: { notes?: readonly string[]; fileExists?: (path: string) => boolean } = {},
): Config {
  const aliased = applyOriginalSettingNames(env, options.fileExists ?? existsSync);
  const read = new ConfigReader(aliased.env);
  const apiAddress = read.string('API_ADDR') ?? ':8080';
  const listen = parseListenAddress(apiAddress);
  if (!listen) read.problems.push(`API_ADDR must look like ":8080" or "127.0.0.1:8080" (got "${apiAddress}")`);
  const clockStartText = read.string('PROMPTPIPE_CLOCK_START');
  const clockStart = clockStartText ? new Date(clockStartText) : undefined;
  if (clockStart && Number.isNaN(clockStart.getTime())) {
    read.problems.push(`PROMPTPIPE_CLOCK_START must be an ISO time (got "${clockStartText}")`);
  }
  const webhookUrl = read.string('PROMPTPIPE_WEBHOOK_URL');
  if (webhookUrl && !URL.canParse(webhookUrl)) {
    read.problems.push(`PROMPTPIPE_WEBHOOK_URL must be a URL (got "${webhookUrl}")`);
  }
  const channels = read.channelList('PROMPTPIPE_CHANNEL', CHANNEL_NAMES, 'webhook');
  const publicUrl = read.string('PROMPTPIPE_PUBLIC_URL');
  const publicUrlProblem = publicUrl === undefined ? undefined : baseUrlProblem(publicUrl);
  if (publicUrlProblem) read.problems.push(`PROMPTPIPE_PUBLIC_URL ${publicUrlProblem} (got "${publicUrl}")`);
  const defaultCountry = (read.string('DEFAULT_COUNTRY') ?? 'US').toUpperCase();
  if (!/^[A-Z]{2}$/.test(defaultCountry)) {
    read.problems.push(`DEFAULT_COUNTRY must be a two-letter country code (got "${defaultCountry}")`);
  }
  const defaultLanguageText = read.string('DEFAULT_LANGUAGE') ?? 'en';
  const defaultLanguage = canonicalLanguageTag(defaultLanguageText);
  if (!defaultLanguage) {
    read.problems.push(
      `DEFAULT_LANGUAGE must be a BCP 47 language tag such as en, es or pt-BR (got "${defaultLanguageText}")`,
    );
  }

  const config: Config = {
    api: {
      host: listen?.host ?? '0.0.0.0',
      port: listen?.port ?? 8080,
      token: read.string('PROMPTPIPE_API_TOKEN'),
      bodyLimitBytes: read.number(
        'API_BODY_LIMIT_BYTES',
        1_048_576,
        (n) => Number.isInteger(n) && n > 0,
        'a positive integer',
      ),
    },
    publicUrl: publicUrl?.replace(/\/+$/, ''),
    dashboard: { sessionIdleTimeoutMs: read.duration('DASHBOARD_SESSION_IDLE_TIMEOUT', '8h') },
    storage: {
      stateDir: read.string('PROMPTPIPE_STATE_DIR') ?? './data',
      databaseUrl: read.string('DATABASE_URL'),
      sqliteSynchronous: read.oneOf('SQLITE_SYNCHRONOUS', ['group', 'full', 'normal'] as const, 'group'),
      poolSize: read.number('DATABASE_POOL_SIZE', 10, (n) => Number.isInteger(n) && n > 0, 'a positive integer'),
      dashboardReadGate: optionalAbsolutePath(read.string('PROMPTPIPE_TEST_DASHBOARD_READ_GATE')),
    },
    llm: {
      apiKey: read.string('OPENAI_API_KEY'),
      baseUrl: read.string('OPENAI_BASE_URL'),
      model: read.string('GENAI_MODEL') ?? 'gpt-4o-mini',
      temperature: read.isBlank('GENAI_TEMPERATURE')
        ? undefined
        : read.number('GENAI_TEMPERATURE', 0.1, (n) => n >= 0 && n <= 2, 'a number from 0 to 2'),
      timeoutMs: read.duration('LLM_TIMEOUT', '60s'),
      maxRetries: read.number('LLM_MAX_RETRIES', 3, (n) => Number.isInteger(n) && n >= 0, 'a non-negative integer'),
      maxConcurrency: read.number('LLM_MAX_CONCURRENCY', 8, (n) => Number.isInteger(n) && n > 0, 'a positive integer'),
      toolProtocol: read.oneOf('LLM_TOOL_PROTOCOL', TOOL_PROTOCOLS, ToolProtocol.NATIVE),
      maxTokens: read.string('LLM_MAX_TOKENS')
        ? read.number('LLM_MAX_TOKENS', 0, (n) => Number.isInteger(n) && n > 0, 'a positive integer')
        : undefined,
      extraBody: read.jsonObject('LLM_EXTRA_BODY'),
      outageRetryForMs: read.duration('LLM_OUTAGE_RETRY_FOR', '1h'),
      outageNotice: read.optionalText('LLM_OUTAGE_NOTICE'),
      circuitBreakerThreshold: read.number(
        'LLM_CIRCUIT_BREAKER_THRESHOLD',
        5,
        (n) => Number.isInteger(n) && n > 0,
        'a positive integer',
      ),
      circuitBreakerCooldownMs: read.duration('LLM_CIRCUIT_BREAKER_COOLDOWN', '30s'),
    },
    prompts: {
      intakeFile: read.string('INTAKE_BOT_PROMPT_FILE'),
      feedbackFile: read.string('FEEDBACK_TRACKER_PROMPT_FILE'),
      promptGeneratorFile: read.string('PROMPT_GENERATOR_PROMPT_FILE'),
    },
    conversation: {
      chatHistoryLimit: read.number(
        'CHAT_HISTORY_LIMIT',
        -1,
        (n) => Number.isInteger(n) && n >= -1,
        'an integer >= -1',
      ),
      debug: read.boolean('PROMPTPIPE_DEBUG', false),
      autoEnrollNewUsers: read.boolean('AUTO_ENROLL_NEW_USERS', false),
      defaultCountry,
    },
    scheduling: {
      clock: read.oneOf('PROMPTPIPE_CLOCK', ['system', 'manual'] as const, 'system'),
      clockStart,
      prepTimeMinutes: read.number(
        'SCHEDULER_PREP_TIME_MINUTES',
        10,
        (n) => Number.isInteger(n) && n >= 0,
        'a non-negative integer',
      ),
      dailyPromptReminderDelayMs: read.duration('DAILY_PROMPT_REMINDER_DELAY', '5h'),
      autoFeedbackAfterPromptEnabled: read.boolean('AUTO_FEEDBACK_AFTER_PROMPT_ENABLED', true),
      feedbackInitialTimeoutMs: read.duration('FEEDBACK_INITIAL_TIMEOUT', '15m'),
      feedbackFollowupDelayMs: read.duration('FEEDBACK_FOLLOWUP_DELAY', '3h'),
      idleAfterUnanswered: read.number(
        'IDLE_AFTER_UNANSWERED',
        3,
        (n) => Number.isInteger(n) && n >= 0,
        'a non-negative integer',
      ),
      idlePausesPrompts: read.boolean('IDLE_PAUSES_PROMPTS', false),
      missedPromptGraceMs: read.duration('MISSED_PROMPT_GRACE', '60m'),
    },
    channel: {
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
    },
    cluster: {
      instanceId: read.string('PROMPTPIPE_INSTANCE_ID') ?? `${hostname()}-${process.pid}`,
      jobLeaseMs: read.duration('PROMPTPIPE_JOB_LEASE', '30s'),
      recoveryIntervalMs: read.duration('PROMPTPIPE_RECOVERY_INTERVAL', '30s'),
    },
    logLevel: read.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    http: { proxy: readProxySettings(read) },
    research: {
      exportPseudonymKey: read.string('EXPORT_PSEUDONYM_KEY'),
      enrollGreetingRate: read.number('ENROLL_GREETING_RATE', 30, (n) => n > 0, 'a positive number (per minute)'),
      broadcastRate: read.number('BROADCAST_RATE', 30, (n) => n > 0, 'a positive number (per minute)'),
      evalReportsDir: read.string('EVAL_REPORTS_DIR') ?? 'eval-report',
    },
    language: { defaultLanguage: defaultLanguage ?? 'en', catalogueDir: read.string('MESSAGE_CATALOGUE_DIR') },
    study: { designFile: read.string('STUDY_DESIGN_FILE') },
    originalApi: { defaultSchedule: readDefaultSchedule(read) },
    safety: readSafetySettings(read),
    startupNotes: [],
  };
  for (const [name, value] of [
    ['PROMPTPIPE_JOB_LEASE', config.cluster.jobLeaseMs],
    ['PROMPTPIPE_RECOVERY_INTERVAL', config.cluster.recoveryIntervalMs],
    ['DASHBOARD_SESSION_IDLE_TIMEOUT', config.dashboard.sessionIdleTimeoutMs],
    ['PROMPTPIPE_WEBHOOK_TOLERANCE', config.channel.webhookToleranceMs],
  ] as const) {
    if (value <= 0) read.problems.push(`${name} must be a positive duration such as 30s or 10m`);
  }
  // The heartbeat renews at most once a second: below 3 s it would no longer come every third of the lease, and one
  // late renewal could let another instance take over a job that is still running.
  if (config.cluster.jobLeaseMs > 0 && config.cluster.jobLeaseMs < MINIMUM_JOB_LEASE_MS) {
    read.problems.push('PROMPTPIPE_JOB_LEASE must be at least 3s (the lease is renewed every third of it)');
  }
  config.startupNotes = [...(options.notes ?? []), ...aliased.notes, ...unreadSettingNotes(aliased.env, read.names)];
  if (read.problems.length > 0) {
    throw new AppError('invalid_input', `Invalid configuration:\n  - ${read.problems.join('\n  - ')}`, {
      details: read.problems,
    });
  }
  return deepFreeze(config);
}

/** `DEFAULT_SCHEDULE`: five cron-like fields, `minute hour day month weekday` (UTC), as in the original. */
function readDefaultSchedule(read: ConfigReader): OriginalSchedule | undefined {
  const text = read.string('DEFAULT_SCHEDULE');
  if (text === undefined) return undefined;
  const parsed = parseCronSchedule(text);
  if ('problem' in parsed) read.problems.push(`DEFAULT_SCHEDULE ${parsed.problem}`);
  return 'schedule' in parsed ? parsed.schedule : undefined;
}

/** Why `value` is not an absolute http(s) base URL, or undefined when it is one. */
function baseUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL such as https://coach.example.org';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must start with https:// or http://';
  if (url.search || url.hash || url.username || url.password) {
    return 'must be a base URL without query, fragment or credentials';
  }
  return undefined;
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

/** The proxy variables, read only when `NODE_USE_ENV_PROXY` asks for them (lower case wins, as with curl). */
function readProxySettings(read: ConfigReader): HttpProxySettings | undefined {
  const enabled = read.shared('NODE_USE_ENV_PROXY');
  if (enabled === undefined || ['0', 'false', 'no', 'off'].includes(enabled.toLowerCase())) return undefined;
  const either = (name: string) => read.shared(name.toLowerCase()) ?? read.shared(name) ?? '';
  const settings = { httpProxy: either('HTTP_PROXY'), httpsProxy: either('HTTPS_PROXY'), noProxy: either('NO_PROXY') };
  for (const name of ['httpProxy', 'httpsProxy'] as const) {
    const proxy = settings[name];
    if (proxy && !/^https?:$/.test(URL.canParse(proxy) ? new URL(proxy).protocol : '')) {
      read.problems.push(
        `${name === 'httpProxy' ? 'HTTP_PROXY' : 'HTTPS_PROXY'} must be an http(s) URL (got "${proxy}")`,
      );
    }
  }
  if (!settings.httpProxy && !settings.httpsProxy) {
    read.problems.push('NODE_USE_ENV_PROXY is set, but neither HTTP_PROXY nor HTTPS_PROXY names a proxy');
  }
  return settings;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

function optionalAbsolutePath(path: string | undefined): string | undefined {
  return path === undefined ? undefined : resolve(path);
}

/** One model of `promptpipe eval` (the persona player or the judge): an OpenAI-compatible endpoint. */
export interface EvaluationModelSettings {
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string;
  temperature: number;
}

export interface EvaluationSettings {
  /** `EVAL_PERSONA_*`: plays personas without a script; undefined when neither a base URL nor a key is set. */
  persona: EvaluationModelSettings | undefined;
  /** `EVAL_JUDGE_*`: scores conversations with the rubric; undefined when neither a base URL nor a key is set. */
  judge: EvaluationModelSettings | undefined;
}

function readEvaluationModel(
  read: ConfigReader,
  prefix: string,
  temperature: number,
): EvaluationModelSettings | undefined {
  const baseUrl = read.string(`${prefix}_BASE_URL`);
  const apiKey = read.string(`${prefix}_API_KEY`);
  if (baseUrl !== undefined && !URL.canParse(baseUrl))
    read.problems.push(`${prefix}_BASE_URL must be a URL (got "${baseUrl}")`);
  const settings = {
    baseUrl,
    apiKey,
    model: read.string(`${prefix}_MODEL`) ?? 'gpt-4o-mini',
    temperature: read.number(`${prefix}_TEMPERATURE`, temperature, (n) => n >= 0 && n <= 2, 'a number from 0 to 2'),
  };
  return baseUrl === undefined && apiKey === undefined ? undefined : settings;
}

/**
 * The settings of `promptpipe eval` only, apart from the service's: the persona model (`EVAL_PERSONA_*`, warm by
 * default so personas vary) and the judge (`EVAL_JUDGE_*`, temperature 0 by default so scores repeat).
 */
export function loadEvaluationSettings(env: Environment): EvaluationSettings {
  const read = new ConfigReader(env);
  const settings = {
    persona: readEvaluationModel(read, 'EVAL_PERSONA', 0.8),
    judge: readEvaluationModel(read, 'EVAL_JUDGE', 0),
  };
  if (read.problems.length > 0) {
    throw new AppError('invalid_input', `Invalid configuration:\n  - ${read.problems.join('\n  - ')}`, {
      details: read.problems,
    });
  }
  return settings;
}
