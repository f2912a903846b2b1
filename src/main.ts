/**
 * The composition root: the ONE place that turns the configuration into running parts.
 *
 *   config → clock → store (SQLite, or PostgreSQL with DATABASE_URL) → metrics → job runner → outbox messenger
 *   → LLM (OpenAI-compatible, or "unavailable") → prompts → tools → timers → conversation flow → daily prompts
 *   → channel + delivery → participant service → inbound pipeline → HTTP server
 *
 * Nothing here runs at import time. `createApplication` builds everything without listening or starting work;
 * `start` recovers unprocessed messages, starts the job runner and (for `serve`) the HTTP server; `stop` shuts down
 * gracefully: stop taking work, finish the turns and jobs in flight, close the database.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import packageJson from '../package.json' with { type: 'json' };
import { createApiServer } from './api/api-server.ts';
import { createAuthThrottle } from './api/auth-throttle.ts';
import { createAlertApiRoutes } from './api/routes/alert-routes.ts';
import { createPauseApiRoutes } from './api/routes/pause-routes.ts';
import { createStudyRoutes } from './api/routes/study-routes.ts';
import { createTakeoverApiRoutes } from './api/routes/takeover-routes.ts';
import type { Channel } from './channels/channel.ts';
import { type ChannelRegistry, createChannelRegistry } from './channels/channel-registry.ts';
import { createConsoleChannel } from './channels/console/console-channel.ts';
import { createDeliveryHandler, DELIVER_MESSAGE_JOB } from './channels/delivery-handler.ts';
import { createDeliveryReceipts } from './channels/delivery-receipts.ts';
import { warnAboutDisabledChannels } from './channels/disabled-channels.ts';
import { createInboundService, type InboundService, LLM_OUTAGE_RETRY_JOB } from './channels/inbound-service.ts';
import { unansweredMessageEntry } from './channels/inbound-transcript.ts';
import { createOptOutHandler } from './channels/opt-out.ts';
import { createOutboxMessenger } from './channels/outbox-messenger.ts';
import { withTemplateBundling } from './channels/outside-window/template-bundling.ts';
import {
  createWindowResendHandler,
  WINDOW_RESEND_JOB,
  withWindowResend,
} from './channels/outside-window/window-resend.ts';
import {
  createRecipientOptOutHandler,
  queueRecipientOptOut,
  RECIPIENT_OPT_OUT_JOB,
} from './channels/recipient-opt-out.ts';
import type { TelegramChannel } from './channels/telegram/telegram-channel.ts';
import { TELEGRAM_CHANNEL } from './channels/telegram/telegram-inbound.ts';
import { createTelegramLinkRoutes } from './channels/telegram/telegram-link-route.ts';
import { createTelegramRoutes } from './channels/telegram/telegram-webhook-route.ts';
import { createTwilioChannel } from './channels/twilio/twilio-channel.ts';
import { createTwilioRoutes } from './channels/twilio/twilio-webhook-route.ts';
import { createWebChatChannel, WEB_CHAT_CHANNEL } from './channels/web-chat/web-chat-channel.ts';
import { createWebhookChannel } from './channels/webhook/webhook-channel.ts';
import { createWebhookInboundRoutes } from './channels/webhook/webhook-inbound-route.ts';
import { graphApiVersionWarning } from './channels/whatsapp-cloud/graph-api-versions.ts';
import { createWhatsAppCloudChannel } from './channels/whatsapp-cloud/whatsapp-cloud-channel.ts';
import { createWhatsAppCloudRoutes } from './channels/whatsapp-cloud/whatsapp-cloud-webhook-route.ts';
import { type ConnectionLease, createInProcessLease } from './channels/whatsapp-web/connection-lease.ts';
import { wakeHeldDeliveries, withDeliveryHold } from './channels/whatsapp-web/delivery-hold.ts';
import type { WhatsAppSocketFactory } from './channels/whatsapp-web/whatsapp-socket.ts';
import {
  createWhatsAppWebChannel,
  DEFAULT_WHATSAPP_SESSION,
  WHATSAPP_WEB_CHANNEL,
  type WhatsAppWebChannel,
} from './channels/whatsapp-web/whatsapp-web-channel.ts';
import type { Config, TelegramSettings } from './config.ts';
import { ConversationState } from './domain/conversation-state.ts';
import { AppError, errorMessage } from './domain/errors.ts';
import { type NewId, randomId } from './domain/ids.ts';
import type { ConversationFlow } from './engine/conversation-flow.ts';
import { createConversationFlow } from './engine/conversation-flow-service.ts';
import { createHabitPromptGenerator } from './engine/habit-prompt-generator-service.ts';
import { createFeedbackModule } from './engine/modules/feedback-module.ts';
import { createIntakeModule } from './engine/modules/intake-module.ts';
import { withExtraTools } from './engine/modules/with-extra-tools.ts';
import { createRequestGuard } from './engine/request-validator.ts';
import { loadLanguageSystemPrompts, loadSystemPrompts } from './engine/system-prompts.ts';
import { createHttpClient } from './http/http-client.ts';
import { loadMessageCatalogue } from './i18n/load-message-catalogue.ts';
import type { MessageCatalogue } from './i18n/message-catalogue.ts';
import { createCircuitBreakerLlm } from './llm/circuit-breaker-llm.ts';
import { createConcurrencyLimitedLlm } from './llm/concurrency-limited-llm.ts';
import type { LlmClient } from './llm/llm.ts';
import { createMeteredLlm } from './llm/metered-llm.ts';
import { createOpenAiCompatibleLlm, OPENAI_DEFAULT_BASE_URL } from './llm/openai-compatible-llm.ts';
import { createUnavailableLlm, LLM_NOT_CONFIGURED_MESSAGE } from './llm/unavailable-llm.ts';
import { withEventMetrics } from './observability/event-metrics-store.ts';
import type { Log } from './observability/log.ts';
import { createMetrics, type Metrics } from './observability/metrics.ts';
import { refuseOriginalDatabase } from './original/original-database-guard.ts';
import { createScheduleHandler, ORIGINAL_SCHEDULE_JOB } from './original/original-schedule-jobs.ts';
import { createOriginalSender } from './original/original-sender.ts';
import { createOriginalTimers } from './original/original-timers.ts';
import { createParticipantService, type ParticipantService } from './participants/participant-service.ts';
import { createPauseService, PARTICIPANT_RESUME_JOB, type PauseService } from './participants/pause-service.ts';
import {
  BROADCAST_MESSAGE_JOB,
  createBroadcastHandler,
  createBroadcastService,
} from './research/broadcasts/broadcast-service.ts';
import { createGreetingHandler, ENROLL_GREETING_JOB } from './research/import/greeting-jobs.ts';
import { createImportService, type ImportService } from './research/import/import-service.ts';
import { languagePromptSources, type PromptSource, promptSources } from './research/provenance/prompt-version.ts';
import { createProvenanceLlm, providerHostOf } from './research/provenance/provenance-llm.ts';
import { recordStartup } from './research/provenance/startup-record.ts';
import { ADHERENCE_CHECK_JOB, createAdherenceAlerts } from './safety/adherence-alerts.ts';
import { createHeldTurnHandler, HELD_TURN_JOB } from './safety/held-coach-turn.ts';
import { createSafetyNet } from './safety/safety-net.ts';
import { createTakeoverService, TAKEOVER_IDLE_JOB } from './safety/takeover-service.ts';
import { type Clock, createManualClock, isManualClock, systemClock } from './scheduling/clock.ts';
import { createDailyPromptHandler } from './scheduling/daily-prompt-handler.ts';
import { DAILY_PROMPT_JOB } from './scheduling/daily-prompt-jobs.ts';
import type { JobRunner } from './scheduling/job-runner.ts';
import { createJobRunner } from './scheduling/job-runner-service.ts';
import { withQuietHours } from './scheduling/quiet-hours.ts';
import { createSharedManualClock } from './scheduling/shared-manual-clock.ts';
import { registerTimers } from './scheduling/timers/index.ts';
import { createAuditTrail } from './staff/audit-trail.ts';
import { createStaffAccess } from './staff/staff-access.ts';
import { createInProcessLock } from './store/participant-lock.ts';
import type { ClusterCoordinator } from './store/postgres/postgres-coordinator.ts';
import { createSqliteStore } from './store/sqlite/sqlite-store.ts';
import { acquireStateDirLock, type StateDirLock } from './store/sqlite/state-dir-lock.ts';
import type { Job, Store } from './store/store.ts';
import { createFlagForStaffTool, FLAG_FOR_STAFF_TOOL } from './tools/flag-for-staff-tool.ts';
import { createGenerateHabitPromptTool } from './tools/generate-habit-prompt-tool.ts';
import { createSaveUserProfileTool } from './tools/save-user-profile-tool.ts';
import { createSchedulerTool } from './tools/scheduler-tool.ts';
import { createToolRegistry } from './tools/tool-registry.ts';
import { createTransitionStateTool } from './tools/transition-state-tool.ts';
import { importColumnsOf } from './trials/allocation-sequence.ts';
import { armPromptSources, createArmSettings } from './trials/arm-settings.ts';
import {
  createDecisionOutcomeHandler,
  createDecisionPointHandler,
  DECISION_OUTCOME_JOB,
  DECISION_POINT_JOB,
  withDailyPromptDecisions,
} from './trials/decision-jobs.ts';
import { loadStudyDesign } from './trials/study-design-file.ts';
import { createTrialService } from './trials/trial-service.ts';
import { createChatRoutes } from './web/chat-routes.ts';
import { createDashboardRoutes } from './web/dashboard-routes.ts';
import { createLiveTranscripts } from './web/live-transcript.ts';
import { createWebChatLinks } from './web/web-chat-links.ts';

/** How long a webhook gateway may take to accept one outbound message. */
const WEBHOOK_TIMEOUT_MS = 10_000;

export const VERSION: string = packageJson.version;

/** The process logger: pino fits both the narrow `Log` and Fastify's request logger. */
export type ApplicationLogger = Log & FastifyBaseLogger;

export interface ApplicationOptions {
  config: Config;
  log: ApplicationLogger;
  /** Replaces the channels chosen by `PROMPTPIPE_CHANNEL` with this one (the console chat passes its own). */
  channel?: Channel;
  /** Replaces the store the configuration names (tests). */
  store?: Store;
  newId?: NewId;
  /**
   * Wall-clock milliseconds of the dashboard's session expiry and the token throttle (tests); default `Date.now`.
   * Not the study clock: moving a manual study clock must not sign the staff out.
   */
  wallClock?: () => number;
}

export interface Application {
  readonly config: Config;
  readonly store: Store;
  readonly clock: Clock;
  readonly metrics: Metrics;
  /** The default channel. */
  readonly channel: Channel;
  readonly channels: ChannelRegistry;
  readonly llm: LlmClient;
  readonly flow: ConversationFlow;
  readonly participants: ParticipantService;
  readonly inbound: InboundService;
  readonly runner: JobRunner;
  /** Bulk enrolment (research data). */
  readonly imports: ImportService;
  /** Vacation mode: pause with an optional resume date, resume. */
  readonly pauses: PauseService;
  /** Built, not listening. */
  readonly server: FastifyInstance;
  /** Recovers unprocessed inbound messages and starts the job runner; with `listen`, also the HTTP server. */
  start(options?: { listen?: boolean }): Promise<void>;
  /** Graceful: stop taking work, finish what is in flight, close the database. Idempotent. */
  stop(): Promise<void>;
}

/**
 * SQLite at `$PROMPTPIPE_STATE_DIR/promptpipe.db`, or PostgreSQL when `DATABASE_URL` is set; migrated on open.
 * The PostgreSQL modules (and `pg`) are imported only when used, like the channel SDKs: memory a SQLite deployment
 * does not pay for.
 */
export async function openStore(
  config: Config,
  log: Log,
  options: {
    /**
     * `read`: when a running server holds the SQLite state directory, open its database read-only beside it (a CLI
     * listing or export) instead of refusing.
     */
    besideServer?: 'read';
  } = {},
): Promise<Store> {
  if (config.storage.databaseUrl) {
    await refuseOriginalDatabase(config.storage.databaseUrl);
    const { createPostgresStore } = await import('./store/postgres/postgres-store.ts');
    const store = await createPostgresStore({
      connectionString: config.storage.databaseUrl,
      maxConnections: config.storage.poolSize,
    });
    log.info({ database: 'postgres' }, 'database: PostgreSQL (DATABASE_URL), migrations applied');
    return store;
  }
  mkdirSync(config.storage.stateDir, { recursive: true });
  const filename = join(config.storage.stateDir, 'promptpipe.db');
  // SQLite is single-process: a second process on this state directory is refused here, naming the holder's pid.
  let stateDirLock: StateDirLock;
  try {
    stateDirLock = acquireStateDirLock(config.storage.stateDir);
  } catch (error) {
    if (options.besideServer !== 'read' || !(error instanceof AppError) || error.code !== 'conflict') throw error;
    log.info({ database: 'sqlite', filename }, 'reading the database beside the server that owns it (read-only)');
    return createSqliteStore({ filename, readOnly: true });
  }
  let store: Store;
  try {
    store = await createSqliteStore({
      filename,
      synchronous: config.storage.sqliteSynchronous,
      ...(config.storage.dashboardReadGate ? { dashboardReadGate: config.storage.dashboardReadGate } : {}),
    });
  } catch (error) {
    stateDirLock.release();
    throw error;
  }
  const synchronous = config.storage.sqliteSynchronous;
  log.info({ database: 'sqlite', filename, synchronous }, `database: SQLite at ${filename}, migrations applied`);
  if (synchronous === 'normal') {
    log.warn({}, 'SQLITE_SYNCHRONOUS=normal: a power loss may lose the last committed messages (a crash does not)');
  }
  const close = store.close;
  return Object.assign(store, {
    async close() {
      try {
        await close();
      } finally {
        stateDirLock.release();
      }
    },
  });
}

/** The cluster coordinator on PostgreSQL (unless the store was injected); undefined on SQLite (one process). */
async function openCoordinator(
  config: Config,
  log: Log,
  store: Store,
  injectedStore: boolean,
): Promise<ClusterCoordinator | undefined> {
  const { databaseUrl } = config.storage;
  if (!databaseUrl || injectedStore || store.dialect !== 'postgres') return undefined;
  const { createClusterCoordinator } = await import('./store/postgres/postgres-coordinator.ts');
  const coordinator = await createClusterCoordinator({
    connectionString: databaseUrl,
    instanceId: config.cluster.instanceId,
    onLost: (error) => {
      // The advisory locks went with the connection while turns may still run under them: stop at once and let
      // the other instances (or this one, restarted) take the work over. Crash-only is the safe answer here.
      log.error(
        { error: errorMessage(error), instanceId: config.cluster.instanceId },
        'lost the coordination connection to PostgreSQL (participant locks gone); exiting',
      );
      process.exit(1);
    },
    onError: (message, error) => log.error({ error: errorMessage(error) }, message),
  });
  log.info({ instanceId: config.cluster.instanceId, owner: coordinator.owner }, 'cluster coordination: PostgreSQL');
  return coordinator;
}

/** Without a key or a base URL there is no model to call: turns answer "assistant unavailable". */
function llmConfigured(config: Config): boolean {
  return Boolean(config.llm.apiKey || config.llm.baseUrl);
}

function createLlm(config: Config, log: Log, fetch: typeof globalThis.fetch): LlmClient {
  const { llm } = config;
  if (!llmConfigured(config)) {
    log.warn({}, `${LLM_NOT_CONFIGURED_MESSAGE}. The server runs, but every turn answers "assistant unavailable".`);
    return createUnavailableLlm();
  }
  log.info(
    { model: llm.model, baseUrl: llm.baseUrl ?? OPENAI_DEFAULT_BASE_URL, maxConcurrency: llm.maxConcurrency },
    `LLM: ${llm.model} at ${llm.baseUrl ?? OPENAI_DEFAULT_BASE_URL}`,
  );
  return createOpenAiCompatibleLlm({
    apiKey: llm.apiKey,
    baseUrl: llm.baseUrl,
    model: llm.model,
    temperature: llm.temperature,
    maxTokens: llm.maxTokens,
    extraBody: llm.extraBody,
    timeoutMs: llm.timeoutMs,
    maxRetries: llm.maxRetries,
    log,
    fetch,
  });
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

/**
 * The WhatsApp Web socket: Baileys, or — TESTS ONLY — the `createWhatsAppSocket` export of the module named by
 * `PROMPTPIPE_WHATSAPP_WEB_SOCKET_MODULE` (the end-to-end test runs the real server process against a fake).
 */
export async function loadWhatsAppSocketFactory(config: Config, log: Log): Promise<WhatsAppSocketFactory> {
  const modulePath = config.channel.whatsappWebSocketModule;
  // Baileys is imported only when the channel is enabled (it is the largest dependency in memory).
  if (!modulePath) return (await import('./channels/whatsapp-web/baileys-socket.ts')).createBaileysSocket;
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
  const { createPostgresConnectionLease } = await import('./channels/whatsapp-web/postgres-connection-lease.ts');
  return createPostgresConnectionLease({
    connectionString: databaseUrl,
    name: `promptpipe:whatsapp-web:${DEFAULT_WHATSAPP_SESSION}`,
    onError: (error) => log.error({ error: error.message }, 'whatsapp-web: connection lease database error'),
  });
}

/** The telegram channel; grammY is imported only when it is enabled, like the other channel SDKs. */
async function loadTelegramChannel(
  settings: TelegramSettings,
  fetch: typeof globalThis.fetch,
  parts: Omit<
    Parameters<typeof import('./channels/telegram/telegram-channel.ts').createTelegramChannel>[0],
    'api' | 'mode' | 'webhookSecret'
  >,
): Promise<TelegramChannel> {
  const [{ createTelegramBotApi }, { createTelegramChannel }] = await Promise.all([
    import('./channels/telegram/telegram-bot-api.ts'),
    import('./channels/telegram/telegram-channel.ts'),
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

function isWhatsAppWebChannel(channel: Channel): channel is WhatsAppWebChannel {
  return channel.name === WHATSAPP_WEB_CHANNEL && 'attachInbound' in channel;
}

export async function createApplication(options: ApplicationOptions): Promise<Application> {
  const { config, log } = options;
  const newId = options.newId ?? randomId;
  const clock: Clock =
    config.scheduling.clock === 'manual' ? createManualClock(config.scheduling.clockStart ?? new Date()) : systemClock;
  if (config.scheduling.clock === 'manual') {
    log.warn(
      { now: clock.now().toISOString() },
      'clock: MANUAL (PROMPTPIPE_CLOCK=manual); move it with POST /admin/clock',
    );
  }

  // The original PromptPipe's settings read as ours, and settings set but not read: said, never silently ignored.
  for (const note of config.startupNotes) log.warn({}, note);
  // One connection pool for every outbound call (the model, the channels' providers), closed at stop.
  const httpClient = createHttpClient(config.http.proxy ? { proxy: config.http.proxy } : {});
  const rawStore = options.store ?? (await openStore(config, log));
  const metrics = createMetrics({ jobs: rawStore.jobs, collectProcessMetrics: true });
  const store = withEventMetrics(rawStore, metrics);
  // Several instances on one PostgreSQL: the participant lock, instance liveness, wake-ups and the manual clock go
  // through one dedicated connection (see postgres-coordinator.ts and docs/deployment.md).
  const coordinator = await openCoordinator(config, log, rawStore, options.store !== undefined);
  const lock = coordinator?.lock ?? createInProcessLock();
  const jobRunner = createJobRunner({
    store,
    clock,
    lock,
    log,
    owner: coordinator?.owner ?? `${config.cluster.instanceId}#${newId('runner')}`,
    leaseMs: config.cluster.jobLeaseMs,
    // A dead instance's jobs are taken over as soon as its liveness lock is gone, not when their lease runs out.
    ...(coordinator ? { releaseAbandonedJobs: (now: Date) => coordinator.releaseAbandonedJobs(now) } : {}),
    onJobRun: (job, report) => metrics.recordJobLateness(job.kind, report.lateMs / 1000),
  });
  // QUIET_HOURS: proactive jobs due inside the window wait for its end (scheduling/quiet-hours.ts); replies never do.
  const runner = config.safety.quietHours
    ? withQuietHours(jobRunner, { window: config.safety.quietHours, store, clock })
    : jobRunner;
  coordinator?.onNotification('jobs', () => runner.notify());
  const sharedClock =
    coordinator && isManualClock(clock)
      ? createSharedManualClock({
          clock,
          coordinator,
          runner,
          onError: (error) => log.error({ error: errorMessage(error) }, 'following the shared manual clock failed'),
        })
      : undefined;
  const notifyRunner = (): void => runner.notify();
  // One process per SQLite database, so its runner is the only claimer: a delivery that can go now is handed to it
  // directly (see createOutboxMessenger). Several instances on PostgreSQL claim every delivery.
  const messenger = createOutboxMessenger({
    store,
    clock,
    newId,
    onEnqueued: notifyRunner,
    ...(store.dialect === 'sqlite' && !coordinator ? { handOff: runner } : {}),
  });

  // A trial's design is validated before anything is sent: an error in it stops the start, naming its line and field.
  const study = config.study.designFile ? await loadStudyDesign(config.study.designFile) : undefined;
  if (study) {
    log.info({ studyId: study.design.study.id, hash: study.hash, arms: study.design.arms.length }, 'study design');
  }
  const trials = createTrialService({ store, clock, study });
  // What an arm changes (prompts, tone, static or no daily prompt, timers) goes through the ports the engine has.
  const armSettings = study ? createArmSettings({ study, store, clock }) : undefined;
  const prompts = loadSystemPrompts(config.prompts);
  const languagePrompts = loadLanguageSystemPrompts(config.prompts);
  const promptFiles: PromptSource[] = [
    ...promptSources([
      { path: config.prompts.intakeFile ?? 'intake.txt', text: prompts.intake },
      { path: config.prompts.feedbackFile ?? 'feedback.txt', text: prompts.feedback },
      { path: config.prompts.promptGeneratorFile ?? 'prompt-generator.txt', text: prompts.promptGenerator },
    ]),
    ...languagePromptSources([languagePrompts.intake, languagePrompts.feedback, languagePrompts.promptGenerator]),
    ...armPromptSources(study),
  ];
  // Metered inside the limit: latency measures the provider, not the queue for a slot. Provenance (llm_calls) too.
  // The breaker outside the limit: while the model is failing, refused calls do not queue for a slot.
  const llm = createCircuitBreakerLlm({
    llm: createConcurrencyLimitedLlm({
      llm: createMeteredLlm({
        llm: createProvenanceLlm({
          llm: createLlm(config, log, httpClient.fetch),
          llmCalls: store.llmCalls,
          clock,
          providerHost: providerHostOf(config.llm.baseUrl ?? OPENAI_DEFAULT_BASE_URL),
          temperature: config.llm.temperature,
          prompts: promptFiles,
          log,
        }),
        metrics,
      }),
      maxConcurrency: config.llm.maxConcurrency,
    }),
    threshold: config.llm.circuitBreakerThreshold,
    cooldownMs: config.llm.circuitBreakerCooldownMs,
    now: () => clock.now(),
  });
  const messages = loadMessageCatalogue({ ...config.language, log });
  // Risk detection and staff alerts (docs/safety.md). The classifier is the coach's model unless SAFETY_MODEL names
  // another, at the same endpoint; either way its calls are recorded in llm_calls like any other.
  const safety = createSafetyNet({
    settings: config.safety,
    publicUrl: config.publicUrl,
    store,
    clock,
    newId,
    log,
    messenger,
    runner,
    modelLlm:
      config.safety.modelCheck && llmConfigured(config)
        ? config.safety.model
          ? createProvenanceLlm({
              llm: createOpenAiCompatibleLlm({
                apiKey: config.llm.apiKey,
                baseUrl: config.llm.baseUrl,
                model: config.safety.model,
                temperature: 0,
                maxTokens: config.llm.maxTokens,
                timeoutMs: config.llm.timeoutMs,
                maxRetries: config.llm.maxRetries,
                log,
              }),
              llmCalls: store.llmCalls,
              clock,
              providerHost: providerHostOf(config.llm.baseUrl ?? OPENAI_DEFAULT_BASE_URL),
              temperature: 0,
              prompts: promptFiles,
              log,
            })
          : llm
        : undefined,
    transcriptEntry: unansweredMessageEntry,
  });
  const takeovers = createTakeoverService({
    store,
    clock,
    newId,
    messenger,
    alerts: safety.alerts,
    idleAfterMs: config.safety.takeoverIdleAfterMs,
    transcriptEntry: unansweredMessageEntry,
    onEnqueued: notifyRunner,
  });
  runner.register(TAKEOVER_IDLE_JOB, (job) => takeovers.remindIfIdle(job), { lock: false });
  const adherence = createAdherenceAlerts({
    store,
    clock,
    newId,
    log,
    alerts: safety.alerts,
    rules: config.safety.adherence,
    onEnqueued: notifyRunner,
  });
  runner.register(ADHERENCE_CHECK_JOB, () => adherence.run(), { lock: false });
  const generator = createHabitPromptGenerator({
    store,
    llm,
    clock,
    systemPrompt: prompts.promptGenerator,
    log,
    languagePrompts: languagePrompts.promptGenerator,
    defaultLanguage: config.language.defaultLanguage,
    ...(armSettings ? { promptSettings: armSettings.promptSettings } : {}),
  });
  const habitPrompts = armSettings ? armSettings.promptGenerator(generator) : generator;
  const timers = registerTimers({
    runner,
    store,
    clock,
    newId,
    messenger,
    config: config.scheduling,
    log,
    messages,
    ...(armSettings ? { features: armSettings.timerFeatures } : {}),
  });
  const registry = createToolRegistry([
    createSaveUserProfileTool({
      store,
      clock,
      ...(armSettings ? { toneAdaptation: armSettings.toneAdaptation } : {}),
    }),
    createFlagForStaffTool({ store, alerts: safety.alerts, review: config.safety.review }),
    createGenerateHabitPromptTool({ store, clock, generator: habitPrompts, hooks: timers.turnHooks }),
    createTransitionStateTool({ store, clock, delayedTransitions: timers.delayedTransitions }),
    createSchedulerTool({
      store,
      clock,
      newId,
      config: { prepTimeMinutes: config.scheduling.prepTimeMinutes },
      onJobEnqueued: notifyRunner,
    }),
  ]);
  const flow = createConversationFlow({
    store,
    llm,
    registry,
    messenger,
    clock,
    lock,
    modules: {
      [ConversationState.INTAKE]: withExtraTools(createIntakeModule(prompts.intake, languagePrompts.intake), [
        FLAG_FOR_STAFF_TOOL,
      ]),
      [ConversationState.FEEDBACK]: withExtraTools(createFeedbackModule(prompts.feedback, languagePrompts.feedback), [
        FLAG_FOR_STAFF_TOOL,
      ]),
    },
    hooks: timers.turnHooks,
    config: {
      chatHistoryLimit: config.conversation.chatHistoryLimit,
      debug: config.conversation.debug,
      toolProtocol: config.llm.toolProtocol,
    },
    log,
    onToolCall: (call) => metrics.recordToolCall(call.name, call.outcome),
    requestGuard: createRequestGuard({ mode: 'repair', log }),
    messages,
    ...(armSettings ? { promptSettings: armSettings.promptSettings } : {}),
  });
  const dailyPromptHandler = createDailyPromptHandler({
    store,
    clock,
    messenger,
    promptGenerator: habitPrompts,
    newId,
    config: {
      prepTimeMinutes: config.scheduling.prepTimeMinutes,
      missedPromptGraceMs: config.scheduling.missedPromptGraceMs,
    },
    log,
    afterPromptSent: timers.afterPromptSent,
    deliveryGuard: armSettings ? armSettings.deliveryGuard(timers.deliveryGuard) : timers.deliveryGuard,
    onJobEnqueued: notifyRunner,
    messages,
  });
  // A trial's decision points at the daily prompt time are decided as its job runs (trials/decision-jobs.ts); a
  // moment decided later than the grace is missed, like the prompt.
  const { missedPromptGraceMs } = config.scheduling;
  runner.register(
    DAILY_PROMPT_JOB,
    study
      ? withDailyPromptDecisions(dailyPromptHandler, { store, clock, messenger, newId, study, missedPromptGraceMs })
      : dailyPromptHandler,
  );

  if (study) {
    // Micro-randomised decision points: decided once each, in the job's transaction (trials/decision-jobs.ts).
    runner.register(
      DECISION_POINT_JOB,
      createDecisionPointHandler({
        store,
        clock,
        messenger,
        newId,
        study,
        missedPromptGraceMs,
        onJobEnqueued: notifyRunner,
      }),
    );
    runner.register(DECISION_OUTCOME_JOB, createDecisionOutcomeHandler({ store, clock, study }));
  }
  const whatsappSocketFactory = config.channel.enabled.includes(WHATSAPP_WEB_CHANNEL)
    ? await loadWhatsAppSocketFactory(config, log)
    : undefined;
  const whatsappLease = whatsappSocketFactory ? await createWhatsAppLease(config, log) : undefined;
  const createWhatsAppWeb =
    whatsappSocketFactory && whatsappLease
      ? () =>
          createWhatsAppWebChannel({ store, clock, log, socketFactory: whatsappSocketFactory, lease: whatsappLease })
      : undefined;
  const telegramSettings = options.channel ? undefined : config.channel.telegram;
  const telegramChannel = telegramSettings
    ? await loadTelegramChannel(telegramSettings, httpClient.fetch, {
        publicUrl: config.publicUrl,
        store,
        clock,
        log,
        messages,
        onJobEnqueued: notifyRunner,
      })
    : undefined;
  const channels = createChannelRegistry(
    options.channel
      ? [options.channel]
      : createConfiguredChannels(
          config,
          log,
          store,
          clock,
          httpClient.fetch,
          createWhatsAppWeb,
          telegramChannel,
          messages,
        ),
  );
  const channel = channels.defaultChannel;
  const whatsappWebChannel = channels.all().find(isWhatsAppWebChannel);
  const receipts = createDeliveryReceipts({ store, clock, metrics, log });
  // A provider's "outside the window" failure (131047, 63016) re-sends the message as a template (window-resend.ts).
  const providerReceipts = withWindowResend(receipts, { store, channels, clock, newId, log, onEnqueued: notifyRunner });
  runner.register(WINDOW_RESEND_JOB, createWindowResendHandler({ store, clock, newId, log, onEnqueued: notifyRunner }));
  whatsappWebChannel?.attachReceipts(receipts);
  // Deliveries held while WhatsApp Web was not connected go out as soon as it is (each still one job row).
  whatsappWebChannel?.onConnected(() => {
    void wakeHeldDeliveries({ store, clock, log, channel: WHATSAPP_WEB_CHANNEL, notify: () => runner.notify() });
  });
  // Under the participant's lock: the lock is FIFO, so a prompt and its polls reach the gateway in the order they were
  // sent, never overlapping (a slow gateway must not see "Did you do it?" before the prompt).
  // A channel that is not connected (whatsapp-web before linking) asks for its deliveries to wait, not fail.
  runner.register(
    DELIVER_MESSAGE_JOB,
    withDeliveryHold({
      // Outside the WhatsApp window, a prompt's polls go in its template (template-bundling.ts).
      handler: withTemplateBundling({
        store,
        channels,
        receipts,
        clock,
        log,
        handler: createDeliveryHandler({
          channels,
          metrics,
          log,
          receipts,
          messages,
          durable: () => store.durable(),
          // A participant who blocked the bot is withdrawn, as by STOP (recipient-opt-out.ts).
          onRecipientOptedOut: (refusal, tx) => queueRecipientOptOut(tx, refusal, { now: clock.now(), newId }),
        }),
      }),
      clock,
      log,
      ...(whatsappWebChannel
        ? {
            holdBefore: (job: Job) => {
              const queued = (job.payload as { message?: { channel?: string } }).message;
              return channels.channelFor(queued?.channel) === whatsappWebChannel
                ? whatsappWebChannel.deliveryHold()
                : undefined;
            },
          }
        : {}),
    }),
    // Ordered: across instances too, one participant's deliveries are claimed one at a time in enqueue order.
    { ordered: true },
  );

  // The private web-chat links, when that channel is on (the dashboard shows them; enrolment returns `chat_url`).
  const chatLinks = channels.get(WEB_CHAT_CHANNEL) ? createWebChatLinks({ store, clock }) : undefined;
  const participants = createParticipantService({
    // Deleting revokes the links in its own commit; this ends the chat streams they still have open.
    ...(chatLinks ? { onDeleted: (participantId: string) => chatLinks.revoked(participantId) } : {}),
    store,
    flow,
    messenger,
    lock,
    clock,
    newId,
    log,
    defaultCountry: config.conversation.defaultCountry,
    channelNames: channels.names,
    prepTimeMinutes: config.scheduling.prepTimeMinutes,
    onJobEnqueued: notifyRunner,
    defaultLanguage: config.language.defaultLanguage,
    messages,
    ...(study ? { study } : {}),
  });
  // The original PromptPipe's API: its prompts go out like organiser messages, its schedules are durable jobs.
  const originalSender = createOriginalSender({ store, participants, messenger, llm, lock, clock, log });
  runner.register(
    ORIGINAL_SCHEDULE_JOB,
    createScheduleHandler({ store, sender: originalSender, clock, newId, log, onJobEnqueued: notifyRunner }),
  );
  // Greetings of bulk imports run without the participant lock: greeting takes it itself.
  runner.register(ENROLL_GREETING_JOB, createGreetingHandler(flow), { lock: false });
  const imports = createImportService({
    store,
    participants,
    clock,
    newId,
    defaultCountry: config.conversation.defaultCountry,
    channels: channels.names,
    greetingRatePerMinute: config.research.enrollGreetingRate,
    onJobEnqueued: notifyRunner,
    // A stratified trial may stratify on bulk-import columns: the readers accept those too.
    extraColumns: study ? importColumnsOf(study.design) : [],
  });
  const pauses = createPauseService({ store, clock, newId, participants, onEnqueued: notifyRunner });
  // Without the participant lock: resuming updates the participant, which takes it itself.
  runner.register(PARTICIPANT_RESUME_JOB, (job) => pauses.resumeOnDate(job), { lock: false });
  runner.register(BROADCAST_MESSAGE_JOB, createBroadcastHandler({ store, clock, messenger }));
  const broadcasts = createBroadcastService({
    store,
    clock,
    newId,
    ratePerMinute: config.research.broadcastRate,
    defaultChannel: channel.name,
    onJobEnqueued: notifyRunner,
  });
  const optOut = createOptOutHandler({
    store,
    clock,
    participants,
    messenger,
    channels,
    keywords: { optOut: config.channel.optOutKeywords, optIn: config.channel.optInKeywords },
    log,
    messages,
  });
  const inbound = createInboundService({
    store,
    // One process per SQLite database: no other instance can have begun a message this one received.
    onlyProcessor: store.dialect === 'sqlite' && !coordinator,
    flow,
    participants,
    clock,
    newId,
    log,
    metrics,
    autoEnroll: config.conversation.autoEnrollNewUsers,
    messages,
    optOut,
    lock,
    safety: safety.screen,
    takeover: takeovers,
    answerWhilePaused: config.safety.pauseAnswersMessages,
    // Only for a configured model: without one, every turn answers "assistant unavailable" at once.
    ...(config.llm.apiKey || config.llm.baseUrl
      ? {
          outage: {
            messenger,
            retryForMs: config.llm.outageRetryForMs,
            notice: (participant) => config.llm.outageNotice ?? messages.t(participant.language, 'reply.outageNotice'),
            notify: notifyRunner,
            onOutage: (outcome) => metrics.recordLlmOutage?.(outcome),
          },
        }
      : {}),
  });
  // Without the participant lock: the flow takes it itself.
  runner.register(
    HELD_TURN_JOB,
    createHeldTurnHandler({ store, clock, log, flow, answerWhilePaused: config.safety.pauseAnswersMessages }),
    { lock: false },
  );
  // Without the participant lock: the flow takes it itself, and the inbound pipeline keeps arrival order.
  runner.register(LLM_OUTAGE_RETRY_JOB, (job) => inbound.retryHeld(job), { lock: false });
  // Without the participant lock: withdrawing takes it itself.
  runner.register(RECIPIENT_OPT_OUT_JOB, createRecipientOptOutHandler(optOut), { lock: false });
  telegramChannel?.attach({
    inbound,
    onBlocked: async (participantId) => {
      await optOut.recipientRefused({ participantId, channel: TELEGRAM_CHANNEL, reason: 'blocked the bot' });
    },
  });
  // `chat_url`: absolute with PROMPTPIPE_PUBLIC_URL (a link to send as it is), else the path on this server.
  const chatUrlFor = chatLinks
    ? async (participant: { id: string; channel: string }) =>
        (participant.channel || channel.name) === WEB_CHAT_CHANNEL
          ? `${config.publicUrl ?? ''}${await chatLinks.pathFor(participant.id)}`
          : undefined
    : undefined;
  whatsappWebChannel?.attachInbound(inbound);
  // One budget of wrong tokens per address for the API and the dashboard's sign-in: both take the API token.
  const authThrottle = createAuthThrottle(options.wallClock ? { now: options.wallClock } : {});
  // Who is asking: staff sessions (the dashboard, and the reads marked `dashboardSession`), personal tokens, the API
  // token. One for the API and the dashboard; the audit trail records what they do.
  const staffAccess = createStaffAccess({
    staff: store.staff,
    apiToken: config.api.token,
    idleTimeoutMs: config.dashboard.sessionIdleTimeoutMs,
    publicUrl: config.publicUrl,
    ...(options.wallClock ? { now: options.wallClock } : {}),
  });
  const auditTrail = createAuditTrail({
    audit: store.audit,
    now: () => new Date((options.wallClock ?? Date.now)()),
    log,
  });
  const server = createApiServer({
    config,
    authThrottle,
    access: staffAccess,
    auditTrail,
    chatUrlFor,
    ...(telegramChannel
      ? {
          telegramLinkFor: async (participant: { id: string; channel: string }) =>
            (participant.channel || channel.name) === TELEGRAM_CHANNEL
              ? telegramChannel.linkFor(participant.id)
              : undefined,
        }
      : {}),
    store,
    participants,
    clock,
    runner: sharedClock ? { advanceTo: sharedClock.advanceTo } : runner,
    channelRoutes: [
      ...(channels.get('webhook')
        ? [
            createWebhookInboundRoutes({
              inbound,
              secret: config.channel.webhookSecret,
              clock,
              signingClock: systemClock,
              toleranceMs: config.channel.webhookToleranceMs,
              host: config.api.host,
              log,
            }),
          ]
        : []),
      ...(channels.get('whatsapp-cloud') && config.channel.whatsappCloud
        ? [createWhatsAppCloudRoutes({ inbound, receipts: providerReceipts, ...config.channel.whatsappCloud, log })]
        : []),
      ...(channels.get('twilio') && config.channel.twilio
        ? [createTwilioRoutes({ inbound, receipts: providerReceipts, ...config.channel.twilio, log })]
        : []),
      ...(telegramChannel
        ? [
            createTelegramLinkRoutes({
              participants,
              linkFor: (id) => telegramChannel.linkFor(id),
              isLinked: (id) => telegramChannel.isLinked(id),
            }),
          ]
        : []),
      ...(telegramChannel && telegramSettings?.mode === 'webhook' && telegramSettings.webhookSecret
        ? [
            createTelegramRoutes({
              secret: telegramSettings.webhookSecret,
              handleUpdate: (update) => telegramChannel.handleUpdate(update),
            }),
          ]
        : []),
    ],
    metrics,
    llmHealth: () => (llmConfigured(config) ? llm.health() : { status: 'not_configured', consecutive_failures: 0 }),
    ...(whatsappWebChannel
      ? { channelStates: () => ({ [WHATSAPP_WEB_CHANNEL]: { state: whatsappWebChannel.connectionState() } }) }
      : {}),
    log,
    httpLogger: log,
    version: VERSION,
    research: {
      export: { store, pseudonymKey: config.research.exportPseudonymKey, defaultChannel: channel.name },
      imports,
      broadcasts: { service: broadcasts, ratePerMinute: config.research.broadcastRate },
    },
    instanceId: config.cluster.instanceId,
    originalApi: {
      store,
      sender: originalSender,
      timers: createOriginalTimers({ store, lock, clock }),
      clock,
      newId,
      defaultCountry: config.conversation.defaultCountry,
      defaultSchedule: config.originalApi.defaultSchedule,
      llmConfigured: llmConfigured(config),
      onJobEnqueued: notifyRunner,
    },
  });

  void server.register(createAlertApiRoutes({ store, alerts: safety.alerts }));
  void server.register(createTakeoverApiRoutes({ store, takeovers }));
  void server.register(createPauseApiRoutes({ pauses }));
  // The dashboard always; the participant chat pages when the web-chat channel is on.
  void server.register(
    createDashboardRoutes({
      access: staffAccess,
      auditTrail,
      authThrottle,
      exportPseudonymKeySet: config.research.exportPseudonymKey !== undefined,
      evalReportsDir: config.research.evalReportsDir,
      store,
      participants,
      imports,
      clock,
      runner,
      channelNames: channels.names,
      chatLinks,
      ...(telegramChannel ? { telegramLinks: telegramChannel } : {}),
      live: createLiveTranscripts,
      trials,
      alerts: safety.alerts,
      takeovers,
      pauses,
    }),
  );
  void server.register(createStudyRoutes({ trials }));
  if (chatLinks) {
    void server.register(
      createChatRoutes({ store, participants, inbound, links: chatLinks, live: createLiveTranscripts }),
    );
  }

  let stopping: Promise<void> | undefined;
  let listening = false;
  return {
    config,
    store,
    clock,
    metrics,
    channel,
    channels,
    llm,
    flow,
    participants,
    inbound,
    runner,
    imports,
    pauses,
    server,
    async start(startOptions = {}) {
      await recordStartup({ events: store.events, config, prompts: promptFiles, version: VERSION, now: clock.now() });
      for (const enabled of channels.all()) await enabled.start?.();
      // Participants on a channel this server does not run (a `promptpipe chat` participant on a webhook server).
      await warnAboutDisabledChannels({ participants: store.participants, enabled: channels.names, log });
      await sharedClock?.start();
      // SQLite: this process is the only runner, so what a killed predecessor left running is released now rather
      // than when its lease expires. (PostgreSQL may have live peers: the runner releases only the jobs of instances
      // whose liveness lock is gone, at its start and on every heartbeat.)
      if (store.dialect === 'sqlite') {
        const released = await store.jobs.releaseLeases(clock.now());
        if (released > 0) log.info({ count: released }, 'jobs left running by the last run released');
      }
      await adherence.start();
      await inbound.recoverUnprocessed();
      inbound.startRecoveryLoop?.(config.cluster.recoveryIntervalMs);
      runner.start();
      if (startOptions.listen) {
        await server.listen({ host: config.api.host, port: config.api.port });
        listening = true;
      }
    },
    stop() {
      stopping ??= (async () => {
        // Order: no new requests (in-flight ones finish), then the turns in flight, then jobs, then the database.
        if (listening) await server.close();
        // WhatsApp acknowledges a message once received: stop receiving before the pipeline refuses messages, or one
        // arriving in between would be lost. Deliveries still running then are held for the next start.
        await whatsappWebChannel?.stop?.();
        await telegramChannel?.stop?.();
        await inbound.stop();
        await runner.stop();
        for (const enabled of channels.all()) await enabled.stop?.();
        if (!listening) await server.close();
        await coordinator?.close();
        await store.close();
        await httpClient.close();
        log.info({}, 'stopped');
      })();
      return stopping;
    },
  };
}
