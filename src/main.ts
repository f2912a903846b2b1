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
import { join } from 'node:path';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import packageJson from '../package.json' with { type: 'json' };
import { createApiServer } from './api/api-server.ts';
import type { Channel } from './channels/channel.ts';
import { type ChannelRegistry, createChannelRegistry } from './channels/channel-registry.ts';
import { createConsoleChannel } from './channels/console/console-channel.ts';
import { createDeliveryHandler, DELIVER_MESSAGE_JOB } from './channels/delivery-handler.ts';
import { createDeliveryReceipts } from './channels/delivery-receipts.ts';
import { createInboundService, type InboundService } from './channels/inbound-service.ts';
import { createOptOutHandler } from './channels/opt-out.ts';
import { createOutboxMessenger } from './channels/outbox-messenger.ts';
import { createWebhookChannel } from './channels/webhook/webhook-channel.ts';
import { createWebhookInboundRoutes } from './channels/webhook/webhook-inbound-route.ts';
import type { Config } from './config.ts';
import { ConversationState } from './domain/conversation-state.ts';
import { errorMessage } from './domain/errors.ts';
import { type NewId, randomId } from './domain/ids.ts';
import type { ConversationFlow } from './engine/conversation-flow.ts';
import { createConversationFlow } from './engine/conversation-flow-service.ts';
import { createHabitPromptGenerator } from './engine/habit-prompt-generator-service.ts';
import { createFeedbackModule } from './engine/modules/feedback-module.ts';
import { createIntakeModule } from './engine/modules/intake-module.ts';
import { createRequestGuard } from './engine/request-validator.ts';
import { loadLanguageSystemPrompts, loadSystemPrompts } from './engine/system-prompts.ts';
import { loadMessageCatalogue } from './i18n/load-message-catalogue.ts';
import { createConcurrencyLimitedLlm } from './llm/concurrency-limited-llm.ts';
import type { LlmClient } from './llm/llm.ts';
import { createMeteredLlm } from './llm/metered-llm.ts';
import { createOpenAiCompatibleLlm, OPENAI_DEFAULT_BASE_URL } from './llm/openai-compatible-llm.ts';
import { createUnavailableLlm, LLM_NOT_CONFIGURED_MESSAGE } from './llm/unavailable-llm.ts';
import { withEventMetrics } from './observability/event-metrics-store.ts';
import type { Log } from './observability/log.ts';
import { createMetrics, type Metrics } from './observability/metrics.ts';
import { createParticipantService, type ParticipantService } from './participants/participant-service.ts';
import { type Clock, createManualClock, isManualClock, systemClock } from './scheduling/clock.ts';
import { createDailyPromptHandler } from './scheduling/daily-prompt-handler.ts';
import { DAILY_PROMPT_JOB } from './scheduling/daily-prompt-jobs.ts';
import type { JobRunner } from './scheduling/job-runner.ts';
import { createJobRunner } from './scheduling/job-runner-service.ts';
import { createSharedManualClock } from './scheduling/shared-manual-clock.ts';
import { registerTimers } from './scheduling/timers/index.ts';
import { createInProcessLock } from './store/participant-lock.ts';
import { type ClusterCoordinator, createClusterCoordinator } from './store/postgres/postgres-coordinator.ts';
import { createPostgresStore } from './store/postgres/postgres-store.ts';
import { createSqliteStore } from './store/sqlite/sqlite-store.ts';
import { acquireStateDirLock } from './store/sqlite/state-dir-lock.ts';
import type { Store } from './store/store.ts';
import { createGenerateHabitPromptTool } from './tools/generate-habit-prompt-tool.ts';
import { createSaveUserProfileTool } from './tools/save-user-profile-tool.ts';
import { createSchedulerTool } from './tools/scheduler-tool.ts';
import { createToolRegistry } from './tools/tool-registry.ts';
import { createTransitionStateTool } from './tools/transition-state-tool.ts';

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
  /** Built, not listening. */
  readonly server: FastifyInstance;
  /** Recovers unprocessed inbound messages and starts the job runner; with `listen`, also the HTTP server. */
  start(options?: { listen?: boolean }): Promise<void>;
  /** Graceful: stop taking work, finish what is in flight, close the database. Idempotent. */
  stop(): Promise<void>;
}

/** SQLite at `$PROMPTPIPE_STATE_DIR/promptpipe.db`, or PostgreSQL when `DATABASE_URL` is set; migrated on open. */
export async function openStore(config: Config, log: Log): Promise<Store> {
  if (config.storage.databaseUrl) {
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
  const stateDirLock = acquireStateDirLock(config.storage.stateDir);
  let store: Store;
  try {
    store = await createSqliteStore({ filename, synchronous: config.storage.sqliteSynchronous });
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

function createLlm(config: Config, log: Log): LlmClient {
  const { llm } = config;
  if (!llm.apiKey && !llm.baseUrl) {
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
    timeoutMs: llm.timeoutMs,
    maxRetries: llm.maxRetries,
    log,
  });
}

/** One adapter per enabled channel, in `PROMPTPIPE_CHANNEL` order (the first is the default). */
function createConfiguredChannels(config: Config, log: Log): Channel[] {
  return config.channel.enabled.map((name) => {
    if (name === 'console') {
      log.warn({}, 'console channel: coach messages are printed on stdout; talk to the coach with `promptpipe chat`');
      return createConsoleChannel({ output: process.stdout });
    }
    return createConfiguredWebhookChannel(config, log);
  });
}

function createConfiguredWebhookChannel(config: Config, log: Log): Channel {
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
  return createWebhookChannel({ url: webhookUrl, secret: webhookSecret, timeoutMs: WEBHOOK_TIMEOUT_MS, log });
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

  const rawStore = options.store ?? (await openStore(config, log));
  const metrics = createMetrics({ jobs: rawStore.jobs, collectProcessMetrics: true });
  const store = withEventMetrics(rawStore, metrics);
  // Several instances on one PostgreSQL: the participant lock, instance liveness, wake-ups and the manual clock go
  // through one dedicated connection (see postgres-coordinator.ts and docs/deployment.md).
  const coordinator = await openCoordinator(config, log, rawStore, options.store !== undefined);
  const lock = coordinator?.lock ?? createInProcessLock();
  const runner = createJobRunner({
    store,
    clock,
    lock,
    log,
    owner: coordinator?.owner ?? `${config.cluster.instanceId}#${newId('runner')}`,
    leaseMs: config.cluster.jobLeaseMs,
    onJobRun: (job, report) => metrics.recordJobLateness(job.kind, report.lateMs / 1000),
  });
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
  const messenger = createOutboxMessenger({ store, clock, newId, onEnqueued: notifyRunner });

  // Metered inside the limit: latency measures the provider, not the queue for a slot.
  const llm = createConcurrencyLimitedLlm({
    llm: createMeteredLlm({ llm: createLlm(config, log), metrics }),
    maxConcurrency: config.llm.maxConcurrency,
  });
  const prompts = loadSystemPrompts(config.prompts);
  const messages = loadMessageCatalogue({ ...config.language, log });
  const languagePrompts = loadLanguageSystemPrompts(config.prompts);
  const generator = createHabitPromptGenerator({
    store,
    llm,
    clock,
    systemPrompt: prompts.promptGenerator,
    log,
    languagePrompts: languagePrompts.promptGenerator,
    defaultLanguage: config.language.defaultLanguage,
  });
  const timers = registerTimers({ runner, store, clock, newId, messenger, config: config.scheduling, log, messages });
  const registry = createToolRegistry([
    createSaveUserProfileTool({ store, clock }),
    createGenerateHabitPromptTool({ store, clock, generator, hooks: timers.turnHooks }),
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
      [ConversationState.INTAKE]: createIntakeModule(prompts.intake, languagePrompts.intake),
      [ConversationState.FEEDBACK]: createFeedbackModule(prompts.feedback, languagePrompts.feedback),
    },
    hooks: timers.turnHooks,
    config: { chatHistoryLimit: config.conversation.chatHistoryLimit, debug: config.conversation.debug },
    log,
    onToolCall: (call) => metrics.recordToolCall(call.name, call.outcome),
    requestGuard: createRequestGuard({ mode: 'repair', log }),
    messages,
  });
  runner.register(
    DAILY_PROMPT_JOB,
    createDailyPromptHandler({
      store,
      clock,
      messenger,
      promptGenerator: generator,
      newId,
      config: {
        prepTimeMinutes: config.scheduling.prepTimeMinutes,
        missedPromptGraceMs: config.scheduling.missedPromptGraceMs,
      },
      log,
      afterPromptSent: timers.afterPromptSent,
      deliveryGuard: timers.deliveryGuard,
      onJobEnqueued: notifyRunner,
      messages,
    }),
  );

  const channels = createChannelRegistry(options.channel ? [options.channel] : createConfiguredChannels(config, log));
  const channel = channels.defaultChannel;
  const receipts = createDeliveryReceipts({ store, clock, metrics, log });
  // Under the participant's lock: the lock is FIFO, so a prompt and its polls reach the gateway in the order they were
  // sent, never overlapping (a slow gateway must not see "Did you do it?" before the prompt).
  // Ordered: across instances too, one participant's deliveries are claimed one at a time in enqueue order.
  runner.register(DELIVER_MESSAGE_JOB, createDeliveryHandler({ channels, metrics, log, receipts, messages }), {
    ordered: true,
  });

  const participants = createParticipantService({
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
  });
  const inbound = createInboundService({
    store,
    flow,
    participants,
    clock,
    newId,
    log,
    metrics,
    autoEnroll: config.conversation.autoEnrollNewUsers,
    messages,
    optOut: createOptOutHandler({
      store,
      clock,
      participants,
      messenger,
      channels,
      keywords: { optOut: config.channel.optOutKeywords, optIn: config.channel.optInKeywords },
      log,
      messages,
    }),
    lock,
  });
  const server = createApiServer({
    config,
    store,
    participants,
    clock,
    runner: sharedClock ? { advanceTo: sharedClock.advanceTo } : runner,
    channelRoutes: channels.get('webhook')
      ? [createWebhookInboundRoutes({ inbound, secret: config.channel.webhookSecret })]
      : [],
    metrics,
    log,
    httpLogger: log,
    version: VERSION,
    instanceId: config.cluster.instanceId,
  });

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
    server,
    async start(startOptions = {}) {
      for (const enabled of channels.all()) await enabled.start?.();
      await sharedClock?.start();
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
        await inbound.stop();
        await runner.stop();
        for (const enabled of channels.all()) await enabled.stop?.();
        if (!listening) await server.close();
        await coordinator?.close();
        await store.close();
        log.info({}, 'stopped');
      })();
      return stopping;
    },
  };
}
