/**
 * Outages lose nothing (issue 10): the real engine (fake model), the inbound pipeline, the durable job runner and a
 * manual clock. The model goes down while a participant writes; nothing is lost, one notice goes out, the real reply
 * follows exactly once after recovery, and past LLM_OUTAGE_RETRY_FOR the message is failed, visibly.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createInboundService,
  type InboundService,
  LLM_OUTAGE_RETRY_JOB,
  llmOutageDedupKey,
} from '../../src/channels/inbound-service.ts';
import { AppError } from '../../src/domain/errors.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import { createBuiltInMessageCatalogue } from '../../src/i18n/built-in-catalogues.ts';
import { silentLog } from '../../src/observability/log.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import type { JobRunner } from '../../src/scheduling/job-runner.ts';
import { createJobRunner } from '../../src/scheduling/job-runner-service.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import { createEngineHarness, type EngineHarness } from '../support/engine-harness.ts';

const MINUTE = 60_000;
const messages = createBuiltInMessageCatalogue();
/** The notice as the composition root builds it: LLM_OUTAGE_NOTICE when set, else the catalogue. */
const DEFAULT_LLM_OUTAGE_NOTICE = messages.t('en', 'reply.outageNotice');

interface OutageRig {
  harness: EngineHarness;
  inbound: InboundService;
  runner: JobRunner;
  model: { down: boolean };
  metrics: ReturnType<typeof createMetrics>;
  /** A new inbound service and runner over the same store: what a restart leaves. */
  restart(): void;
  receive(text: string, id: string): Promise<string>;
  advanceMinutes(minutes: number): Promise<void>;
}

let rig: OutageRig | undefined;
afterEach(async () => {
  await rig?.inbound.stop();
  await rig?.harness.close();
  rig = undefined;
});

async function createRig(
  options: { retryForMs?: number; notice?: string; language?: string } = {},
): Promise<OutageRig> {
  const model = { down: false };
  const harness = await createEngineHarness({
    ...(options.language ? { participant: { language: options.language } } : {}),
    script: (request) => {
      if (model.down) return { error: new AppError('llm_error', 'LLM request failed with status 503: overloaded') };
      const last = request.messages.at(-1)?.content ?? '';
      return { content: `reply to ${last}` };
    },
  });
  const metrics = createMetrics({});
  const newId = sequentialIds();
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
    runner.register(LLM_OUTAGE_RETRY_JOB, (job) => inbound.retryHeld(job), { lock: false });
    return { inbound, runner };
  };
  const built = build();
  const created: OutageRig = {
    harness,
    model,
    metrics,
    ...built,
    restart() {
      const next = build();
      created.inbound = next.inbound;
      created.runner = next.runner;
    },
    async receive(text, id) {
      const receipt = await created.inbound.receive({
        channel: 'webhook',
        from: harness.participant.phoneNumber,
        text,
        providerMessageId: id,
      });
      await created.inbound.idle();
      return receipt.inboundId;
    },
    async advanceMinutes(minutes) {
      await created.runner.advanceTo(new Date(harness.clock.now().getTime() + minutes * MINUTE));
      await created.inbound.idle();
    },
  };
  return created;
}

describe('model outages lose nothing', () => {
  it('model down for 10 minutes: one notice, then the real reply exactly once, in order with a later message', async () => {
    rig = await createRig();
    const { harness } = rig;
    const participantId = harness.participant.id;
    rig.model.down = true;
    const first = await rig.receive('I walked today', 'm1');
    expect(harness.messenger.textsFor(participantId)).toEqual([DEFAULT_LLM_OUTAGE_NOTICE]);
    expect((await harness.store.inbound.get(first))?.status).toBe('received');
    expect(await harness.store.jobs.getPendingByKey(llmOutageDedupKey(participantId))).toBeDefined();

    await rig.advanceMinutes(4);
    const second = await rig.receive('and I slept well', 'm2');
    await rig.advanceMinutes(6);
    // Ten minutes of outage, several retries: still the one notice, nothing answered, nothing lost.
    expect(harness.messenger.textsFor(participantId)).toEqual([DEFAULT_LLM_OUTAGE_NOTICE]);
    expect((await harness.store.inbound.get(first))?.status).toBe('received');
    expect((await harness.store.inbound.get(second))?.status).toBe('received');
    expect(harness.llm.requests.length).toBeGreaterThan(2);

    rig.model.down = false;
    await rig.advanceMinutes(6);
    expect(harness.messenger.textsFor(participantId)).toEqual([
      DEFAULT_LLM_OUTAGE_NOTICE,
      'reply to I walked today',
      'reply to and I slept well',
    ]);
    expect((await harness.store.inbound.get(first))?.status).toBe('processed');
    expect((await harness.store.inbound.get(second))?.status).toBe('processed');
    // The participant's message is recorded once, whatever the number of attempts.
    const transcript = await harness.store.transcript.list(participantId);
    expect(transcript.filter((entry) => entry.role === 'user').map((entry) => entry.content)).toEqual([
      'I walked today',
      'and I slept well',
    ]);
    expect(await harness.store.jobs.getPendingByKey(llmOutageDedupKey(participantId))).toBeUndefined();
    // Nothing more is sent later.
    await rig.advanceMinutes(60);
    expect(harness.messenger.textsFor(participantId)).toHaveLength(3);
    expect(await rig.metrics.registry.getSingleMetricAsString('promptpipe_llm_outage_messages_total')).toContain(
      'outcome="recovered"} 1',
    );
  });

  it('model down past LLM_OUTAGE_RETRY_FOR: the message is failed, with an event, and stays in the history', async () => {
    rig = await createRig({ retryForMs: 30 * MINUTE });
    const { harness } = rig;
    const participantId = harness.participant.id;
    rig.model.down = true;
    const id = await rig.receive('are you there?', 'm1');
    await rig.advanceMinutes(45);
    const inbound = await harness.store.inbound.get(id);
    expect(inbound?.status).toBe('failed');
    expect(inbound?.lastError).toContain('unavailable');
    const events = await harness.store.events.list({ participantId });
    expect(events.filter((event) => event.type === 'message-failed')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'llm-outage')).toHaveLength(1);
    const transcript = await harness.store.transcript.list(participantId);
    expect(transcript.filter((entry) => entry.role === 'user').map((entry) => entry.content)).toEqual([
      'are you there?',
    ]);
    expect(harness.messenger.textsFor(participantId)).toEqual([DEFAULT_LLM_OUTAGE_NOTICE]);
    expect(await harness.store.jobs.getPendingByKey(llmOutageDedupKey(participantId))).toBeUndefined();
    expect(await rig.metrics.registry.getSingleMetricAsString('promptpipe_llm_outage_messages_total')).toContain(
      'outcome="failed"} 1',
    );
  });

  it('survives a restart: the durable job answers the held message, with no second notice', async () => {
    rig = await createRig({ notice: 'Back soon!' });
    const { harness } = rig;
    const participantId = harness.participant.id;
    rig.model.down = true;
    const id = await rig.receive('hello?', 'm1');
    await rig.inbound.stop();
    rig.restart();
    expect(await rig.inbound.recoverUnprocessed()).toBe(1);
    await rig.inbound.idle();
    expect(harness.messenger.textsFor(participantId)).toEqual(['Back soon!']);
    rig.model.down = false;
    await rig.advanceMinutes(5);
    expect(harness.messenger.textsFor(participantId)).toEqual(['Back soon!', 'reply to hello?']);
    expect((await harness.store.inbound.get(id))?.status).toBe('processed');
  });

  it('sends no notice when LLM_OUTAGE_NOTICE is empty', async () => {
    rig = await createRig({ notice: '' });
    rig.model.down = true;
    await rig.receive('hi', 'm1');
    expect(rig.harness.messenger.textsFor(rig.harness.participant.id)).toEqual([]);
    rig.model.down = false;
    await rig.advanceMinutes(1);
    expect(rig.harness.messenger.textsFor(rig.harness.participant.id)).toEqual(['reply to hi']);
  });

  it("sends the notice in the participant's language from the catalogue (issue 15)", async () => {
    rig = await createRig({ language: 'es' });
    rig.model.down = true;
    await rig.receive('hola', 'm1');
    const spanish = messages.t('es', 'reply.outageNotice');
    expect(spanish).not.toBe(DEFAULT_LLM_OUTAGE_NOTICE);
    expect(rig.harness.messenger.textsFor(rig.harness.participant.id)).toEqual([spanish]);
  });

  it('LLM_OUTAGE_NOTICE, when set, overrides the catalogue in every language', async () => {
    rig = await createRig({ language: 'es', notice: 'Back soon.' });
    rig.model.down = true;
    await rig.receive('hola', 'm1');
    expect(rig.harness.messenger.textsFor(rig.harness.participant.id)).toEqual(['Back soon.']);
  });
});
