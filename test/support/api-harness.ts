/**
 * The HTTP API in process for tests: SQLite in memory, a manual clock, predictable ids, the real outbox messenger,
 * participant and inbound services and job runner, the fake conversation flow, and the webhook channel's inbound
 * route. Requests go through `app.inject`, no port is opened.
 */
import type { FastifyInstance, FastifyPluginAsync, LightMyRequestResponse } from 'fastify';
import { createApiServer } from '../../src/api/api-server.ts';
import { createOutboxMessenger } from '../../src/channels/outbox-messenger.ts';
import { createWebhookInboundRoutes } from '../../src/channels/webhook/webhook-inbound-route.ts';
import type { Clock } from '../../src/domain/clock.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import type { Participant } from '../../src/domain/participant.ts';
import type { InboundService } from '../../src/inbound/inbound-port.ts';
import { createInboundService } from '../../src/inbound/inbound-service.ts';
import { type Log, silentLog } from '../../src/observability/log.ts';
import { createMetrics, type Metrics } from '../../src/observability/metrics.ts';
import { createParticipantService, type ParticipantService } from '../../src/participants/participant-service.ts';
import { createManualClock, type ManualClock } from '../../src/scheduling/clock.ts';
import type { JobRunner } from '../../src/scheduling/job-runner.ts';
import { createJobRunner } from '../../src/scheduling/job-runner-service.ts';
import { createInProcessLock, type ParticipantLock } from '../../src/store/participant-lock.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { createFakeConversationFlow, type FakeConversationFlow } from './fake-conversation-flow.ts';

export const START = new Date('2026-03-02T14:00:00.000Z');

export interface ApiHarnessOptions {
  token?: string;
  webhookSecret?: string;
  /** `PROMPTPIPE_WEBHOOK_TOLERANCE` (default 5 minutes). */
  webhookToleranceMs?: number;
  autoEnroll?: boolean;
  bodyLimitBytes?: number;
  /** A system-like clock that is not manual (the `/admin/clock` 409 case). */
  clock?: Clock;
  store?: Store;
  /** The inbound service's participant lock (default: an in-process lock of its own, as on SQLite). */
  inboundLock?: ParticipantLock;
  /** The configured listen host (`API_ADDR`), for the open-API warning. */
  host?: string;
  log?: Log;
  /** More channel routes (a provider's webhook), built from the harness's services. */
  extraChannelRoutes?: (deps: { inbound: InboundService; store: Store; clock: Clock }) => FastifyPluginAsync[];
}

export interface ApiHarness {
  app: FastifyInstance;
  store: Store;
  clock: ManualClock;
  flow: FakeConversationFlow;
  participants: ParticipantService;
  inbound: InboundService;
  runner: JobRunner;
  metrics: Metrics;
  /** JSON request; the body is serialised unless it is already a string. */
  call(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  /** Enrolls through the service (no HTTP) and returns the participant. */
  enroll(phoneNumber?: string, extra?: Partial<Participant>): Promise<Participant>;
  close(): Promise<void>;
}

export async function createApiHarness(options: ApiHarnessOptions = {}): Promise<ApiHarness> {
  const store = options.store ?? (await createSqliteStore({ filename: ':memory:' }));
  const manualClock = createManualClock(START);
  const clock = options.clock ?? manualClock;
  const newId = sequentialIds();
  const lock = createInProcessLock();
  const metrics = createMetrics({ jobs: store.jobs });
  const messenger = createOutboxMessenger({ store, clock, newId });
  const flow = createFakeConversationFlow({ messenger, lock, transcript: store.transcript });
  const participants = createParticipantService({
    store,
    flow,
    messenger,
    lock,
    clock,
    newId,
    log: silentLog,
    defaultCountry: 'US',
    prepTimeMinutes: 10,
  });
  const inbound = createInboundService({
    store,
    flow,
    participants,
    clock,
    newId,
    log: silentLog,
    metrics,
    autoEnroll: options.autoEnroll ?? false,
    ...(options.inboundLock ? { lock: options.inboundLock } : {}),
  });
  const runner = createJobRunner({ store, clock, lock, log: silentLog });
  const app = createApiServer({
    config: {
      api: {
        host: options.host ?? '127.0.0.1',
        token: options.token,
        bodyLimitBytes: options.bodyLimitBytes ?? 1_048_576,
      },
    },
    store,
    participants,
    clock,
    runner,
    channelRoutes: [
      createWebhookInboundRoutes({
        inbound,
        secret: options.webhookSecret,
        clock,
        toleranceMs: options.webhookToleranceMs ?? 5 * 60_000,
        host: options.host ?? '127.0.0.1',
        log: options.log ?? silentLog,
      }),
      ...(options.extraChannelRoutes?.({ inbound, store, clock }) ?? []),
    ],
    metrics,
    log: options.log ?? silentLog,
  });
  await app.ready();
  return {
    app,
    store,
    clock: manualClock,
    flow,
    participants,
    inbound,
    runner,
    metrics,
    call(method, url, body, headers = {}) {
      const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      return app.inject({
        method,
        url,
        headers: { ...(payload !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(payload !== undefined ? { payload } : {}),
      });
    },
    async enroll(phoneNumber = '+15551230001', extra = {}) {
      const participant = await participants.enroll({ phoneNumber, name: extra.name ?? 'Ada' }, { greet: false });
      if (extra.status) return participants.update(participant.id, { status: extra.status });
      return participant;
    },
    async close() {
      await inbound.stop();
      await app.close();
      await store.close();
    },
  };
}
