/**
 * The outage rig: the real engine (fake model that can be taken down or held mid-call), the inbound pipeline with the
 * outage options as the composition root sets them, the durable job runner with the `llm_outage_retry` handler, and
 * a manual clock. Shared by the outage tests.
 */

import { AppError } from '../../src/domain/errors.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import { createBuiltInMessageCatalogue } from '../../src/i18n/built-in-catalogues.ts';
import type { InboundService } from '../../src/inbound/inbound-port.ts';
import { createInboundService } from '../../src/inbound/inbound-service.ts';
import { LLM_OUTAGE_RETRY_JOB } from '../../src/inbound/llm-outage-hold.ts';
import { silentLog } from '../../src/observability/log.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import type { JobRunner } from '../../src/scheduling/job-runner.ts';
import { createJobRunner } from '../../src/scheduling/job-runner-service.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import type { Job } from '../../src/store/store.ts';
import { createEngineHarness, type EngineHarness } from './engine-harness.ts';

export const MINUTE = 60_000;
const messages = createBuiltInMessageCatalogue();
/** The notice as the composition root builds it: LLM_OUTAGE_NOTICE when set, else the catalogue. */
export const DEFAULT_LLM_OUTAGE_NOTICE = messages.t('en', 'reply.outageNotice');

export interface OutageModel {
  down: boolean;
  /** Awaited at the start of every model call while set: a test holds a turn in the middle of its model call. */
  beforeCall?: (() => Promise<void>) | undefined;
}

export interface OutageRig {
  harness: EngineHarness;
  inbound: InboundService;
  runner: JobRunner;
  model: OutageModel;
  metrics: ReturnType<typeof createMetrics>;
  /** Every `llm_outage_retry` run the runner started, in order (its handler then waits for the participant's lock). */
  retryRuns: Job[];
  /** A new inbound service and runner over the same store: what a restart leaves. */
  restart(): void;
  /** Receives a message and waits until it and everything it caused is processed. */
  receive(text: string, id: string): Promise<string>;
  advanceMinutes(minutes: number): Promise<void>;
  /** `promptpipe_llm_outage_messages_total` by outcome (0 when never counted). */
  outageCount(outcome: 'held' | 'recovered' | 'failed'): Promise<number>;
}

export async function createOutageRig(
  options: { retryForMs?: number; notice?: string; language?: string } = {},
): Promise<OutageRig> {
  const model: OutageModel = { down: false };
  const harness = await createEngineHarness({
    ...(options.language ? { participant: { language: options.language } } : {}),
    script: async (request) => {
      await model.beforeCall?.();
      if (model.down) return { error: new AppError('llm_error', 'LLM request failed with status 503: overloaded') };
      const last = request.messages.at(-1)?.content ?? '';
      return { content: `reply to ${last}` };
    },
  });
  const metrics = createMetrics({});
  const newId = sequentialIds();
  const retryRuns: Job[] = [];
  const build = () => {
    const inbound = createInboundService({
      store: harness.store,
      flow: harness.flow,
      participants: {
        findByPhone: (phone) => harness.store.participants.getByPhone(phone),
        enroll: () => Promise.reject(new Error('not used')),
      },
      clock: harness.clock,
      newId: (prefix) => `${newId(prefix)}_${Math.random().toString(36).slice(2, 8)}`,
      log: silentLog,
      metrics,
      autoEnroll: false,
      outage: {
        messenger: harness.messenger,
        retryForMs: options.retryForMs ?? 60 * MINUTE,
        notice: (participant) => options.notice ?? messages.t(participant.language, 'reply.outageNotice'),
        onOutage: (outcome) => metrics.recordLlmOutage?.(outcome),
      },
    });
    const runner = createJobRunner({
      store: harness.store,
      clock: harness.clock,
      lock: createInProcessLock(),
      log: silentLog,
    });
    runner.register(
      LLM_OUTAGE_RETRY_JOB,
      (job) => {
        retryRuns.push(job);
        return inbound.retryHeld(job);
      },
      { lock: false },
    );
    return { inbound, runner };
  };
  const built = build();
  const rig: OutageRig = {
    harness,
    model,
    metrics,
    retryRuns,
    ...built,
    restart() {
      const next = build();
      rig.inbound = next.inbound;
      rig.runner = next.runner;
    },
    async receive(text, id) {
      const receipt = await rig.inbound.receive({
        channel: 'webhook',
        from: harness.participant.phoneNumber,
        text,
        providerMessageId: id,
      });
      await rig.inbound.idle();
      return receipt.inboundId;
    },
    async advanceMinutes(minutes) {
      await rig.runner.advanceTo(new Date(harness.clock.now().getTime() + minutes * MINUTE));
      await rig.inbound.idle();
    },
    async outageCount(outcome) {
      const metric = await metrics.registry.getSingleMetric('promptpipe_llm_outage_messages_total')?.get();
      return metric?.values.find((value) => value.labels['outcome'] === outcome)?.value ?? 0;
    },
  };
  return rig;
}
