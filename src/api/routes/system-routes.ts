/**
 * Operations: `GET /health` (public, for load balancers; 503 when the database does not answer), `GET /metrics`
 * (Prometheus text) and `GET /openapi.json` (the API's OpenAPI 3 document).
 */
import type { FastifyInstance } from 'fastify';
import { errorMessage } from '../../domain/errors.ts';
import { ParticipantStatus } from '../../domain/participant.ts';
import type { LlmHealth } from '../../llm/circuit-breaker-llm.ts';
import type { Log } from '../../observability/log.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { type Clock, systemClock } from '../../scheduling/clock.ts';
import type { Store } from '../../store/store.ts';
import { buildOpenApiDocument } from '../openapi-document.ts';

export function registerSystemRoutes(
  app: FastifyInstance,
  options: {
    store: Pick<Store, 'ping' | 'participants'>;
    clock: Clock;
    metrics: Metrics;
    log: Log;
    version: string;
    /** Connection state of channels that hold a connection (`whatsapp-web`: open, not_linked, logged_out, …). */
    channelStates?: () => Record<string, { state: string }>;
    /** `PROMPTPIPE_INSTANCE_ID`: which of several instances behind a load balancer answered. */
    instanceId?: string;
    llmHealth?: () => LlmHealth;
  },
): void {
  const { store, clock, metrics, log } = options;

  app.get('/health', { config: { public: true } }, async (_request, reply) => {
    // The wall clock, not the (possibly manual) study clock: health is about this process, now.
    const timestamp = systemClock.now().toISOString();
    try {
      await store.ping();
      const activeParticipants = await store.participants.count({ status: ParticipantStatus.ACTIVE });
      return {
        status: 'healthy',
        timestamp,
        ...(options.instanceId === undefined ? {} : { instance_id: options.instanceId }),
        active_participants: activeParticipants,
        clock: clock.now().toISOString(),
        ...(options.llmHealth ? { llm: options.llmHealth() } : {}),
        ...(options.channelStates ? { channels: options.channelStates() } : {}),
      };
    } catch (error) {
      log.error({ error: errorMessage(error) }, 'health check: database unreachable');
      return reply.code(503).send({
        status: 'unhealthy',
        timestamp,
        ...(options.instanceId === undefined ? {} : { instance_id: options.instanceId }),
        message: 'database unreachable',
      });
    }
  });

  app.get('/metrics', { config: { permission: 'read' } }, async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });

  // Built once: the document does not change while the process runs.
  let document: Record<string, unknown> | undefined;
  app.get('/openapi.json', { config: { permission: 'read' } }, async () => {
    document ??= buildOpenApiDocument({ version: options.version });
    return document;
  });
}
