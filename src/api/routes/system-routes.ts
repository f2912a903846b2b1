/**
 * Operations: `GET /health` (public, for load balancers; 503 when the database does not answer), `GET /metrics`
 * (Prometheus text) and `GET /openapi.json` (the API's OpenAPI 3 document).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../../domain/clock.ts';
import { errorMessage } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import { ParticipantStatus } from '../../domain/participant.ts';
import type { LlmHealth } from '../../llm/circuit-breaker-llm.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { systemClock } from '../../scheduling/clock.ts';
import type { Store } from '../../store/store.ts';
import { COMMON_ERRORS } from '../openapi.ts';
import { healthSchema } from '../schemas.ts';

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

  const operations = ['operations'];
  const health = {
    operationId: 'getHealth',
    tags: operations,
    summary: 'Liveness and database reachability (no token needed)',
    response: { 200: healthSchema.describe('Healthy'), 503: healthSchema.describe('Database unreachable') },
  };
  app.get('/health', { config: { public: true }, schema: health }, async (_request, reply) => {
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

  const metricsSchema = {
    operationId: 'getMetrics',
    tags: operations,
    summary: 'Prometheus metrics',
    response: {
      200: { description: 'Prometheus text format', content: { 'text/plain': { schema: z.string() } } },
      401: COMMON_ERRORS[401],
    },
  };
  app.get('/metrics', { config: { permission: 'read' }, schema: metricsSchema }, async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });

  const documentSchema = {
    operationId: 'getOpenApiDocument',
    tags: operations,
    summary: 'This document (generated from the routes by @fastify/swagger)',
    response: {
      200: { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: z.looseObject({}) } } },
      401: COMMON_ERRORS[401],
    },
  };
  // @fastify/swagger builds it once, on the first call: the routes do not change while the process runs.
  app.get('/openapi.json', { config: { permission: 'read' }, schema: documentSchema }, async () => app.swagger());
}
