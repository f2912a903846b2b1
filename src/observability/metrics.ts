/**
 * The Prometheus metrics of one PromptPipe process, served at `GET /metrics`.
 *
 * Each process builds its own registry (never prom-client's global one), so tests and several servers in one
 * process do not share counters. Layers receive the {@link Metrics} object and call its recording methods; none of
 * them imports prom-client.
 *
 * Names follow Prometheus conventions: `_total` counters, `_seconds` durations, labels in snake_case.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** `not_delivered`: deliberately not sent, only recorded (the webhook channel without `PROMPTPIPE_WEBHOOK_URL`). */
export type DeliveryOutcome = 'delivered' | 'failed' | 'not_delivered';
export type LlmCallOutcome = 'success' | 'error';

export interface Metrics {
  /** The registry `/metrics` renders. */
  readonly registry: Registry;
  /** A participant's message accepted from a channel (after deduplication). */
  recordInboundMessage(channel: string): void;
  /** A participant message held by a model outage, answered after it, or failed past `LLM_OUTAGE_RETRY_FOR`. */
  recordLlmOutage?(outcome: 'held' | 'recovered' | 'failed'): void;
  /** One delivery attempt of an outbound message. */
  recordOutboundMessage(channel: string, outcome: DeliveryOutcome): void;
  /** One delivery status of an outbound message: sent when accepted, then what receipts report. */
  recordDeliveryStatus(channel: string, status: string): void;
  /** One chat call to the LLM; `purpose` is the request's label (`intake`, `feedback`, `prompt-generator`…). */
  recordLlmCall(call: {
    purpose: string;
    model: string;
    outcome: LlmCallOutcome;
    durationSeconds: number;
    promptTokens?: number;
    completionTokens?: number;
    /** For errors: the `AppError` code, or `unknown`. */
    errorCode?: string;
  }): void;
  /** One tool execution; `outcome` is the tool result status (`success`, `noop`, `error`). */
  recordToolCall(tool: string, outcome: string): void;
  /** One conversation sub-state change (`INTAKE` → `FEEDBACK`…); `source` says who asked (`tool`, `admin`…). */
  recordStateTransition(from: string, to: string, source: string): void;
  /** How late a job started compared with its `run_at`. */
  recordJobLateness(kind: string, latenessSeconds: number): void;
}

/** What the pending-jobs gauge reads at scrape time (the store's job queue answers it). */
export interface PendingJobs {
  listPending(): Promise<readonly { kind: string }[]>;
}

export interface MetricsOptions {
  /** Where the pending-jobs gauge is read from at scrape time. Without it the gauge stays empty. */
  jobs?: PendingJobs;
  /** Adds prom-client's process metrics (CPU, memory, event loop lag). Off in tests. */
  collectProcessMetrics?: boolean;
}

/** LLM calls take from a few hundred milliseconds to a minute. */
const LLM_DURATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120];
/** A job is normally picked up within milliseconds; minutes or hours late means the process was down. */
const JOB_LATENESS_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800, 3600, 21_600];

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];

  // Every metric registers in this process's registry only.
  const counter = <Label extends string>(name: string, help: string, labelNames: readonly Label[]) =>
    new Counter({ name, help, labelNames, registers });
  const histogram = <Label extends string>(
    name: string,
    help: string,
    labelNames: readonly Label[],
    buckets: number[],
  ) => new Histogram({ name, help, labelNames, buckets, registers });

  const inboundMessages = counter(
    'promptpipe_inbound_messages_total',
    'Participant messages accepted from a channel (duplicates excluded), by channel.',
    ['channel'],
  );
  const outboundMessages = counter(
    'promptpipe_outbound_messages_total',
    'Outbound delivery attempts by channel and outcome (delivered, failed, not_delivered: only recorded).',
    ['channel', 'outcome'],
  );
  const deliveryStatuses = counter(
    'promptpipe_delivery_status_total',
    'Delivery statuses of outbound messages by channel (sent, delivered, read, failed, undelivered, not_delivered…).',
    ['channel', 'status'],
  );
  const llmCalls = counter('promptpipe_llm_calls_total', 'LLM chat calls by purpose, model and outcome.', [
    'purpose',
    'model',
    'outcome',
  ]);
  const llmErrors = counter(
    'promptpipe_llm_errors_total',
    'Failed LLM chat calls (after the adapter retries) by purpose and error code.',
    ['purpose', 'code'],
  );
  const llmDuration = histogram(
    'promptpipe_llm_call_duration_seconds',
    'Wall-clock latency of LLM chat calls, including the adapter retries (not the wait for a concurrency slot).',
    ['purpose', 'outcome'],
    LLM_DURATION_BUCKETS,
  );
  const llmTokens = counter(
    'promptpipe_llm_tokens_total',
    'Tokens reported by the LLM provider, by purpose, model and type (prompt or completion).',
    ['purpose', 'model', 'type'],
  );
  const toolCalls = counter(
    'promptpipe_tool_calls_total',
    'Tool executions by tool name and outcome (success, noop, error).',
    ['tool', 'outcome'],
  );
  const stateTransitions = counter(
    'promptpipe_state_transitions_total',
    'Conversation sub-state transitions by from, to and source.',
    ['from', 'to', 'source'],
  );
  const llmOutageMessages = counter(
    'promptpipe_llm_outage_messages_total',
    'Participant messages held by a model outage (held), answered after it (recovered), or failed past LLM_OUTAGE_RETRY_FOR (failed).',
    ['outcome'],
  );
  const jobLateness = histogram(
    'promptpipe_job_lateness_seconds',
    'Delay between a job run_at and the moment it started, by kind.',
    ['kind'],
    JOB_LATENESS_BUCKETS,
  );
  const jobs = options.jobs;
  new Gauge({
    name: 'promptpipe_pending_jobs',
    help: 'Pending and running jobs by kind, read from the store at scrape time.',
    labelNames: ['kind'] as const,
    registers,
    async collect() {
      if (!jobs) return;
      const counts = new Map<string, number>();
      for (const job of await jobs.listPending()) counts.set(job.kind, (counts.get(job.kind) ?? 0) + 1);
      // Kinds that drained since the last scrape must read 0, not their last value.
      this.reset();
      for (const [kind, count] of counts) this.set({ kind }, count);
    },
  });

  // Process metrics sample the event loop on a timer, which a test process does not want.
  if (options.collectProcessMetrics) collectDefaultMetrics({ register: registry, prefix: 'promptpipe_' });

  return {
    registry,
    recordInboundMessage(channel) {
      inboundMessages.inc({ channel });
    },
    recordLlmOutage(outcome) {
      llmOutageMessages.inc({ outcome });
    },
    recordOutboundMessage(channel, outcome) {
      outboundMessages.inc({ channel, outcome });
    },
    recordDeliveryStatus(channel, status) {
      deliveryStatuses.inc({ channel, status });
    },
    recordLlmCall(call) {
      llmCalls.inc({ purpose: call.purpose, model: call.model, outcome: call.outcome });
      llmDuration.observe({ purpose: call.purpose, outcome: call.outcome }, call.durationSeconds);
      if (call.promptTokens) {
        llmTokens.inc({ purpose: call.purpose, model: call.model, type: 'prompt' }, call.promptTokens);
      }
      if (call.completionTokens) {
        llmTokens.inc({ purpose: call.purpose, model: call.model, type: 'completion' }, call.completionTokens);
      }
      if (call.outcome === 'error') llmErrors.inc({ purpose: call.purpose, code: call.errorCode ?? 'unknown' });
    },
    recordToolCall(tool, outcome) {
      toolCalls.inc({ tool, outcome });
    },
    recordStateTransition(from, to, source) {
      stateTransitions.inc({ from, to, source });
    },
    recordJobLateness(kind, latenessSeconds) {
      jobLateness.observe({ kind }, Math.max(0, latenessSeconds));
    },
  };
}
