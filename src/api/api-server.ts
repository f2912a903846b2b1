/**
 * The HTTP API (Fastify 5). `createApiServer` builds the app from its dependencies and does nothing else: it does
 * not listen (the composition root does) and reads no environment. Tests drive it in process with `app.inject`.
 *
 * Cross-cutting rules live in one place each: the envelope (`envelope.ts`), the error → status mapping
 * (`error-handler.ts`), authentication (`auth.ts`), validation (`validation.ts`).
 */

import fastifyCookie from '@fastify/cookie';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { Log } from '../domain/log.ts';
import type { Participant } from '../domain/participant.ts';
import { failure } from '../http/envelope.ts';
import { plainJsonSerializerCompiler, zodValidatorCompiler } from '../http/validation.ts';
import type { LlmHealth } from '../llm/circuit-breaker-llm.ts';
import { redactingSerializers } from '../observability/log-redaction.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ParticipantService } from '../participants/participant-service.ts';
import type { JobRunner } from '../scheduling/job-runner.ts';
import { type AuditTrail, registerAuditTrail } from '../staff/audit-trail.ts';
import { registerPseudonymisation } from '../staff/pseudonymise-hook.ts';
import { createStaffAccess, type StaffAccess } from '../staff/staff-access.ts';
import type { Store } from '../store/store.ts';
import { registerAuth, warnIfUnprotected } from './auth.ts';
import { type AuthThrottle, createAuthThrottle } from './auth-throttle.ts';
import { registerErrorHandling } from './error-handler.ts';
import { handleClientError, handleFrameworkError, MAX_PARAM_LENGTH } from './framework-errors.ts';
import { registerOpenApi } from './openapi.ts';
import { registerAdminRoutes } from './routes/admin-routes.ts';
import { type OriginalApiOptions, registerOriginalApiRoutes } from './routes/original/original-routes.ts';
import { registerParticipantRoutes } from './routes/participant-routes.ts';
import { type ResearchRouteOptions, registerResearchRoutes } from './routes/research-routes.ts';
import { registerSystemRoutes } from './routes/system-routes.ts';

export interface ApiServerOptions {
  config: { api: Pick<Config['api'], 'host' | 'token' | 'bodyLimitBytes'> };
  /** `durable`: awaited before every response to a request that may have written (see registerDurableResponses). */
  store: Pick<Store, 'ping' | 'participants'> & Partial<Pick<Store, 'llmCalls' | 'durable'>>;
  participants: ParticipantService;
  clock: Clock;
  /** Drives `POST /admin/clock`; without it (or with the system clock) the endpoint answers 409. */
  runner?: Pick<JobRunner, 'advanceTo'>;
  /** Each channel's inbound routes (webhooks). They are public: each authenticates its own way (signatures). */
  channelRoutes?: readonly FastifyPluginAsync[];
  /** Shown by `/health`. */
  channelStates?: () => Record<string, { state: string }>;
  metrics: Metrics;
  log: Log;
  /** Fastify's request logger; without it Fastify logs nothing (errors still reach `log`). */
  httpLogger?: FastifyBaseLogger;
  /** With the web-chat channel: each participant's private chat link (`chat_url` of participants and imports). */
  chatUrlFor?: ((participant: Pick<Participant, 'id' | 'channel'>) => Promise<string | undefined>) | undefined;
  /** With the telegram channel: the enrolment's one-time deep link (`telegram_link`). */
  telegramLinkFor?: ((participant: Participant) => Promise<string | undefined>) | undefined;
  /** Shown in the OpenAPI document. */
  version?: string;
  /** Export, bulk import, broadcasts and statistics (research data). */
  research?: ResearchRouteOptions;
  /** `PROMPTPIPE_INSTANCE_ID`, shown by `/health`. */
  instanceId?: string;
  /** The model's state for `/health` (`llm`): degraded while calls fail or back off; the server stays healthy. */
  llmHealth?: () => LlmHealth;
  /** The original PromptPipe's API (`/send`, `/schedule`, `/receipts`, `/response(s)`, `/timers`). */
  originalApi?: OriginalApiOptions;
  /** Wrong API tokens per client address; shared with the dashboard's sign-in. Default: one of this server's own. */
  authThrottle?: AuthThrottle;
  /**
   * Who is asking (staff accounts, sessions, personal tokens); shared with the dashboard. Default: the API token
   * alone, for a server built without the staff store.
   */
  access?: StaffAccess;
  /** The audit trail of staff actions; without it nothing is recorded (a server built for a test). */
  auditTrail?: AuditTrail;
}

export function createApiServer(options: ApiServerOptions): FastifyInstance {
  const { config, log } = options;
  const app = Fastify({
    bodyLimit: config.api.bodyLimitBytes,
    // Request lines carry credentials in their URL (the web-chat token, `hub.verify_token`, `?token=`): redacted
    // whatever logger was passed in (the process logger redacts them as well).
    ...(options.httpLogger
      ? { loggerInstance: options.httpLogger.child({}, { serializers: redactingSerializers }) }
      : { logger: false }),
    // Clients and tests see "route not found" for /path/ and /path alike.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Errors raised before routing and by the HTTP parser get the envelope too.
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleClientError,
    // Fastify's own 503 while closing bypasses every hook (and our envelope): ours below answers instead.
    return503OnClosing: false,
  });

  registerErrorHandling(app, log);
  registerShutdownRefusal(app);
  // Parses `Cookie` before the access hook reads the dashboard session from it (hooks run in registration order).
  void app.register(fastifyCookie);
  registerAuth(app, {
    access:
      options.access ??
      createStaffAccess({ staff: undefined, apiToken: config.api.token, idleTimeoutMs: 8 * 3_600_000 }),
    throttle: options.authThrottle ?? createAuthThrottle(),
  });
  registerPseudonymisation(app, {
    participantNames: async () => (await options.store.participants.list()).map((participant) => participant.name),
  });
  // Before the durable-response hook: an action's audit row commits with the sync that acknowledges it.
  if (options.auditTrail) registerAuditTrail(app, options.auditTrail);
  if (options.store.durable) registerDurableResponses(app, options.store.durable);
  app.addHook('onListen', async () => {
    warnIfUnprotected({ host: config.api.host, token: config.api.token, log });
  });

  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(plainJsonSerializerCompiler);
  registerOpenApi(app, { version: options.version ?? '0.0.0' });
  // In a plugin, so that they are registered once the OpenAPI generator (a plugin itself) listens for routes.
  void app.register(async (api) => {
    registerSystemRoutes(api, {
      ...(options.instanceId === undefined ? {} : { instanceId: options.instanceId }),
      ...(options.llmHealth ? { llmHealth: options.llmHealth } : {}),
      store: options.store,
      clock: options.clock,
      metrics: options.metrics,
      log,
      version: options.version ?? '0.0.0',
      ...(options.channelStates ? { channelStates: options.channelStates } : {}),
    });
    registerParticipantRoutes(api, {
      participants: options.participants,
      ...(options.store.llmCalls ? { llmCalls: options.store.llmCalls } : {}),
      chatUrlFor: options.chatUrlFor,
      telegramLinkFor: options.telegramLinkFor,
    });
    registerAdminRoutes(api, { clock: options.clock, runner: options.runner });
    if (options.research) registerResearchRoutes(api, { ...options.research, chatUrlFor: options.chatUrlFor });
    if (options.originalApi) registerOriginalApiRoutes(api, options.originalApi);
  });
  for (const routes of options.channelRoutes ?? []) void app.register(routes);
  return app;
}

/** Requests that never write. */
const READ_ONLY_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A response to a request that may have written (an inbound message acknowledged to its gateway, an enrollment, a
 * clock move) goes out only once the commits made so far are durable: with SQLite's group commit a power cut can then
 * lose nothing the server has acknowledged. Reads do not wait. One sync serves all the requests waiting together. When
 * the sync fails, the request is answered 500 (the client retries; inbound messages are deduplicated).
 */
function registerDurableResponses(app: FastifyInstance, durable: () => Promise<void>): void {
  app.addHook('onSend', async (request, reply, payload) => {
    // A 5xx acknowledges nothing (it is also how a failed sync is answered: the error response comes through here).
    if (!READ_ONLY_METHODS.has(request.method) && reply.statusCode < 500) await durable();
    return payload;
  });
}

/**
 * While the server shuts down, a request that still arrives (pipelined, or on a busy keep-alive connection) gets a
 * 503 in the envelope with `Connection: close` and `Retry-After`, before authentication or any handler runs, so a
 * load balancer or client retries elsewhere and no new work starts.
 */
function registerShutdownRefusal(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    return reply
      .code(503)
      .header('connection', 'close')
      .header('retry-after', '5')
      .send(failure('the server is shutting down: retry in a few seconds (another instance may answer)'));
  });
}
