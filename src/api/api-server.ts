/**
 * The HTTP API (Fastify 5). `createApiServer` builds the app from its dependencies and does nothing else: it does
 * not listen (the composition root does) and reads no environment. Tests drive it in process with `app.inject`.
 *
 * Cross-cutting rules live in one place each: the envelope (`envelope.ts`), the error → status mapping
 * (`error-handler.ts`), authentication (`auth.ts`), validation (`validation.ts`).
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import type { Config } from '../config.ts';
import type { Log } from '../observability/log.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ParticipantService } from '../participants/participant-service.ts';
import type { Clock } from '../scheduling/clock.ts';
import type { JobRunner } from '../scheduling/job-runner.ts';
import type { Store } from '../store/store.ts';
import { registerAuth, warnIfUnprotected } from './auth.ts';
import { registerErrorHandling } from './error-handler.ts';
import { handleClientError, handleFrameworkError, MAX_PARAM_LENGTH } from './framework-errors.ts';
import { registerAdminRoutes } from './routes/admin-routes.ts';
import { registerParticipantRoutes } from './routes/participant-routes.ts';
import { registerSystemRoutes } from './routes/system-routes.ts';

export interface ApiServerOptions {
  config: { api: Pick<Config['api'], 'host' | 'token' | 'bodyLimitBytes'> };
  store: Pick<Store, 'ping' | 'participants'>;
  participants: ParticipantService;
  clock: Clock;
  /** Drives `POST /admin/clock`; without it (or with the system clock) the endpoint answers 409. */
  runner?: Pick<JobRunner, 'advanceTo'>;
  /** Each channel's inbound routes (webhooks). They are public: each authenticates its own way (signatures). */
  channelRoutes?: readonly FastifyPluginAsync[];
  metrics: Metrics;
  log: Log;
  /** Fastify's request logger; without it Fastify logs nothing (errors still reach `log`). */
  httpLogger?: FastifyBaseLogger;
  /** Shown in the OpenAPI document. */
  version?: string;
  /** `PROMPTPIPE_INSTANCE_ID`, shown by `/health`. */
  instanceId?: string;
}

export function createApiServer(options: ApiServerOptions): FastifyInstance {
  const { config, log } = options;
  const app = Fastify({
    bodyLimit: config.api.bodyLimitBytes,
    ...(options.httpLogger ? { loggerInstance: options.httpLogger } : { logger: false }),
    // Clients and tests see "route not found" for /path/ and /path alike.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Errors raised before routing and by the HTTP parser get the envelope too.
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleClientError,
  });

  registerErrorHandling(app, log);
  registerAuth(app, config.api.token);
  app.addHook('onListen', async () => {
    warnIfUnprotected({ host: config.api.host, token: config.api.token, log });
  });

  registerSystemRoutes(app, {
    ...(options.instanceId === undefined ? {} : { instanceId: options.instanceId }),
    store: options.store,
    clock: options.clock,
    metrics: options.metrics,
    log,
    version: options.version ?? '0.0.0',
  });
  registerParticipantRoutes(app, { participants: options.participants });
  registerAdminRoutes(app, { clock: options.clock, runner: options.runner });
  for (const routes of options.channelRoutes ?? []) void app.register(routes);
  return app;
}
