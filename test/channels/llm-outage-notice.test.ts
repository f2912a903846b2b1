/**
 * One notice per outage, under every interleaving, and the held metric counting messages (not attempts). An outage
 * begins with the failure of a participant's turn on the model and ends only when a turn of theirs is answered; the
 * retry job being claimed, running, or giving up neither ends one nor starts another.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { llmOutageDedupKey } from '../../src/inbound/llm-outage-hold.ts';
import { createOutageRig, DEFAULT_LLM_OUTAGE_NOTICE, MINUTE, type OutageRig } from '../support/llm-outage-rig.ts';
import { waitUntil } from '../support/wait-until.ts';

let rig: OutageRig | undefined;
afterEach(async () => {
  if (rig) rig.model.beforeCall = undefined;
  await rig?.inbound.stop();
  await rig?.harness.close();
  rig = undefined;
});

async function eventsOfType(current: OutageRig, type: string) {
  return current.harness.store.events.list({ participantId: current.harness.participant.id, type });
}

/** A gate for the model: calls wait at it until `open()`; `reached` resolves when the first call is waiting. */
function modelGate(current: OutageRig): { reached: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  let reachedResolve = (): void => undefined;
  const reached = new Promise<void>((resolve) => {
    reachedResolve = resolve;
  });
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  current.model.beforeCall = () => {
    reachedResolve();
    return opened;
  };
  return { reached, open };
}

describe('one outage notice per outage', () => {
  it('a later message failing while the retry job is claimed and waits for the lock starts no second outage', async () => {
    rig = await createOutageRig();
    const { harness } = rig;
    const participantId = harness.participant.id;
    rig.model.down = true;
    await rig.receive('first', 'm1');
    expect(harness.messenger.textsFor(participantId)).toEqual([DEFAULT_LLM_OUTAGE_NOTICE]);
    const retry = await harness.store.jobs.getPendingByKey(llmOutageDedupKey(participantId));
    expect(retry).toBeDefined();

    // The second message's drain takes the participant's lock and retries the first message; its model call hangs.
    const gate = modelGate(rig);
    await rig.inbound.receive({
      channel: 'webhook',
      from: harness.participant.phoneNumber,
      text: 'second',
      providerMessageId: 'm2',
    });
    await gate.reached;
    // Meanwhile the retry job comes due: claimed (no longer pending), its handler waits for the participant's lock.
    const advancing = rig.runner.advanceTo(new Date(harness.clock.now().getTime() + MINUTE));
    await waitUntil('the retry job to be claimed and waiting for the lock', () => rig?.retryRuns.length === 1);
    expect((await harness.store.jobs.get(retry?.id ?? ''))?.status).toBe('running');
    expect(await harness.store.jobs.getPendingByKey(llmOutageDedupKey(participantId))).toBeUndefined();

    // The hanging call fails: the same outage, no second notice; then the retry job runs and fails too.
    rig.model.beforeCall = undefined;
    gate.open();
    await advancing;
    await rig.inbound.idle();
    expect(harness.messenger.textsFor(participantId)).toEqual([DEFAULT_LLM_OUTAGE_NOTICE]);
    expect(await eventsOfType(rig, 'llm-outage')).toHaveLength(1);
    expect(await rig.outageCount('held')).toBe(2);
    // Still one retry on its way.
    expect(await harness.store.jobs.getPendingByKey(llmOutageDedupKey(participantId))).toBeDefined();

    rig.model.down = false;
    await rig.advanceMinutes(5);
    expect(harness.messenger.textsFor(participantId)).toEqual([
      DEFAULT_LLM_OUTAGE_NOTICE,
      'reply to first',
      'reply to second',
    ]);
    expect(await rig.outageCount('recovered')).toBe(2);
  });

  it('counts each held message once, however many attempts; each is then counted once as recovered', async () => {
    rig = await createOutageRig();
    const { harness } = rig;
    const participantId = harness.participant.id;
    rig.model.down = true;
    await rig.receive('one', 'm1');
    await rig.advanceMinutes(3);
    await rig.receive('two', 'm2');
    await rig.advanceMinutes(3);
    await rig.receive('three', 'm3');
    // Ten more minutes of retries, each one failing on the first message.
    await rig.advanceMinutes(10);
    expect(rig.retryRuns.length).toBeGreaterThan(3);
    expect(harness.llm.requests.length).toBeGreaterThan(5);
    expect(await rig.outageCount('held')).toBe(3);
    expect(harness.messenger.textsFor(participantId)).toEqual([DEFAULT_LLM_OUTAGE_NOTICE]);
    const held = await harness.store.inbound.listUnprocessed(participantId);
    expect(held.map((message) => message.text)).toEqual(['one', 'two', 'three']);
    expect(held.every((message) => message.lastError?.includes('503'))).toBe(true);

    rig.model.down = false;
    await rig.advanceMinutes(5);
    expect(harness.messenger.textsFor(participantId)).toEqual([
      DEFAULT_LLM_OUTAGE_NOTICE,
      'reply to one',
      'reply to two',
      'reply to three',
    ]);
    expect(await rig.outageCount('held')).toBe(3);
    expect(await rig.outageCount('recovered')).toBe(3);
    // Processed messages carry no error.
    for (const id of held.map((message) => message.id)) {
      expect(await harness.store.inbound.get(id)).toMatchObject({ status: 'processed', lastError: undefined });
    }
  });

  it('an answered turn ends the outage: the next failure is a new outage with its own notice', async () => {
    rig = await createOutageRig();
    const { harness } = rig;
    const participantId = harness.participant.id;
    rig.model.down = true;
    await rig.receive('before', 'm1');
    rig.model.down = false;
    // A new message is answered before the retry runs: the held one first, then it; the retry is cancelled.
    await rig.receive('back?', 'm2');
    expect(await harness.store.llmOutages.get(participantId)).toBeUndefined();
    expect(await harness.store.jobs.getPendingByKey(llmOutageDedupKey(participantId))).toBeUndefined();
    expect(await eventsOfType(rig, 'llm-outage-ended')).toHaveLength(1);

    rig.model.down = true;
    await rig.receive('again', 'm3');
    expect(harness.messenger.textsFor(participantId)).toEqual([
      DEFAULT_LLM_OUTAGE_NOTICE,
      'reply to before',
      'reply to back?',
      DEFAULT_LLM_OUTAGE_NOTICE,
    ]);
    expect(await eventsOfType(rig, 'llm-outage')).toHaveLength(2);
  });

  it('giving up does not end the outage: a message after it is held and retried without a second notice', async () => {
    rig = await createOutageRig({ retryForMs: 30 * MINUTE });
    const { harness } = rig;
    const participantId = harness.participant.id;
    rig.model.down = true;
    const first = await rig.receive('still there?', 'm1');
    await rig.advanceMinutes(45);
    expect((await harness.store.inbound.get(first))?.status).toBe('failed');
    expect(await harness.store.llmOutages.get(participantId)).toBeDefined();

    const second = await rig.receive('hello again', 'm2');
    expect(harness.messenger.textsFor(participantId)).toEqual([DEFAULT_LLM_OUTAGE_NOTICE]);
    expect((await harness.store.inbound.get(second))?.status).toBe('received');
    // Its own retry window: a few minutes later it is still held, not failed with the first.
    await rig.advanceMinutes(5);
    expect((await harness.store.inbound.get(second))?.status).toBe('received');
    rig.model.down = false;
    await rig.advanceMinutes(5);
    expect(harness.messenger.textsFor(participantId)).toEqual([DEFAULT_LLM_OUTAGE_NOTICE, 'reply to hello again']);
    expect(await rig.outageCount('held')).toBe(2);
    expect(await rig.outageCount('failed')).toBe(1);
    expect(await rig.outageCount('recovered')).toBe(1);
  });
});
