/**
 * Outages lose nothing (issue 10): the real engine (fake model), the inbound pipeline, the durable job runner and a
 * manual clock. The model goes down while a participant writes; nothing is lost, one notice goes out, the real reply
 * follows exactly once after recovery, and past LLM_OUTAGE_RETRY_FOR the message is failed, visibly.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createBuiltInMessageCatalogue } from '../../src/i18n/built-in-catalogues.ts';
import { llmOutageDedupKey } from '../../src/inbound/llm-outage-hold.ts';
import { createOutageRig, DEFAULT_LLM_OUTAGE_NOTICE, MINUTE, type OutageRig } from '../support/llm-outage-rig.ts';

const messages = createBuiltInMessageCatalogue();

let rig: OutageRig | undefined;
afterEach(async () => {
  await rig?.inbound.stop();
  await rig?.harness.close();
  rig = undefined;
});

describe('model outages lose nothing', () => {
  it('model down for 10 minutes: one notice, then the real reply exactly once, in order with a later message', async () => {
    rig = await createOutageRig();
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
    // Both messages were held (the second behind the first) and both were answered after the outage.
    expect(await rig.outageCount('held')).toBe(2);
    expect(await rig.outageCount('recovered')).toBe(2);
  });

  it('model down past LLM_OUTAGE_RETRY_FOR: the message is failed, with an event, and stays in the history', async () => {
    rig = await createOutageRig({ retryForMs: 30 * MINUTE });
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
    expect(await rig.outageCount('held')).toBe(1);
    expect(await rig.outageCount('failed')).toBe(1);
  });

  it('survives a restart: the durable job answers the held message, with no second notice', async () => {
    rig = await createOutageRig({ notice: 'Back soon!' });
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
    rig = await createOutageRig({ notice: '' });
    rig.model.down = true;
    await rig.receive('hi', 'm1');
    expect(rig.harness.messenger.textsFor(rig.harness.participant.id)).toEqual([]);
    rig.model.down = false;
    await rig.advanceMinutes(1);
    expect(rig.harness.messenger.textsFor(rig.harness.participant.id)).toEqual(['reply to hi']);
  });

  it("sends the notice in the participant's language from the catalogue (issue 15)", async () => {
    rig = await createOutageRig({ language: 'es' });
    rig.model.down = true;
    await rig.receive('hola', 'm1');
    const spanish = messages.t('es', 'reply.outageNotice');
    expect(spanish).not.toBe(DEFAULT_LLM_OUTAGE_NOTICE);
    expect(rig.harness.messenger.textsFor(rig.harness.participant.id)).toEqual([spanish]);
  });

  it('LLM_OUTAGE_NOTICE, when set, overrides the catalogue in every language', async () => {
    rig = await createOutageRig({ language: 'es', notice: 'Back soon.' });
    rig.model.down = true;
    await rig.receive('hola', 'm1');
    expect(rig.harness.messenger.textsFor(rig.harness.participant.id)).toEqual(['Back soon.']);
  });
});
