/** What the composition root builds and hands out: the running parts of one PromptPipe process, and what they share. */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Channel } from '../channels/channel.ts';
import type { ChannelRegistry } from '../channels/channel-registry.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { NewId } from '../domain/ids.ts';
import type { Log } from '../domain/log.ts';
import type { ConversationFlow } from '../engine/conversation-flow.ts';
import type { Messenger } from '../engine/messenger.ts';
import type { InboundService } from '../inbound/inbound-port.ts';
import type { LlmClient } from '../llm/llm.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ParticipantService } from '../participants/participant-service.ts';
import type { PauseService } from '../participants/pause-service.ts';
import type { ImportService } from '../research/import/import-service.ts';
import type { JobRunner } from '../scheduling/job-runner.ts';
import type { ParticipantLock } from '../store/participant-lock.ts';
import type { ClusterCoordinator } from '../store/postgres/postgres-coordinator.ts';
import type { Store } from '../store/store.ts';

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

/** What every capability's wiring receives: the settings, the logger, time, ids, the database and the job runner. */
export interface Core {
  readonly config: Config;
  readonly log: ApplicationLogger;
  readonly clock: Clock;
  readonly newId: NewId;
  /** The store with event metrics; `rawStore` is the one the metrics read from. */
  readonly store: Store;
  readonly metrics: Metrics;
  /** PostgreSQL's cluster coordinator; undefined on SQLite (one process) or with an injected store. */
  readonly coordinator: ClusterCoordinator | undefined;
  readonly lock: ParticipantLock;
  readonly runner: JobRunner;
  /** Wakes the job runner after a job was enqueued. */
  readonly notifyRunner: () => void;
  /** The outbox messenger: every outbound message is a transcript entry and a durable delivery job. */
  readonly messenger: Messenger;
}
