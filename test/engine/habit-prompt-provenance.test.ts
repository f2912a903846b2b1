import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../src/domain/data-keys.ts';
import { silentLog } from '../../src/domain/log.ts';
import { newFlowState } from '../../src/domain/participant-data.ts';
import { createHabitPromptGenerator } from '../../src/engine/habit-prompt-generator-service.ts';
import type { LlmClient } from '../../src/llm/llm.ts';
import { createProvenanceLlm } from '../../src/research/provenance/provenance-llm.ts';
import { createManualClock } from '../../src/scheduling/clock.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { insideUnitOfWork } from '../../src/store/unit-of-work.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const AT = new Date('2026-03-02T14:00:00.000Z');
const PROFILE = { habit_domain: 'walking', prompt_anchor: 'after coffee', preferred_time: '09:00' };

describe('the habit prompt generator’s provenance', () => {
  let store: Store;
  beforeEach(async () => {
    store = await createSqliteStore({ filename: ':memory:' });
    await store.participants.create(participantFixture('p_1', '+15550001111', AT));
    await store.flowStates.save(newFlowState('p_1', AT, { [DataKey.userProfile]: JSON.stringify(PROFILE) }));
  });
  afterEach(() => store.close());

  /** The generator over the production provenance wrapper, which may not write its row outside a transaction. */
  function generatorAnswering(content: string) {
    const model: LlmClient = { model: 'm1', chat: async () => ({ content, toolCalls: [], model: 'm1' }) };
    const llm = createProvenanceLlm({
      llm: model,
      store: {
        afterCommit: (callback) => store.afterCommit(callback),
        llmCalls: {
          ...store.llmCalls,
          record: (call) =>
            insideUnitOfWork()
              ? store.llmCalls.record(call)
              : Promise.reject(new Error('provenance written in a commit of its own')),
        },
      },
      clock: createManualClock(AT),
      providerHost: 'localhost:1',
      temperature: undefined,
      prompts: [],
      log: silentLog,
    });
    return createHabitPromptGenerator({
      store,
      llm,
      clock: createManualClock(AT),
      systemPrompt: 'You write habit prompts.',
      log: silentLog,
    });
  }

  const calls = () => store.research.llmCallsPage({}, undefined, 10);

  it('writes the call’s row in the transaction that keeps the prompt', async () => {
    const outcome = await generatorAnswering('  Walk for five minutes after your coffee.  ').generate('p_1', {
      deliveryMode: 'scheduled',
    });
    expect(outcome).toMatchObject({ ok: true, prompt: 'Walk for five minutes after your coffee.' });
    expect((await calls()).map((call) => [call.participantId ?? null, call.purpose, call.outcome])).toEqual([
      ['p_1', 'prompt-generator', 'success'],
    ]);
    const [event] = await store.events.list({ type: 'habit-prompt-generated' });
    expect(event?.data).toMatchObject({ prompt: 'Walk for five minutes after your coffee.' });
  });

  it('with deferRecord, writes nothing until the caller runs its record in the transaction that keeps the prompt', async () => {
    const outcome = await generatorAnswering('Walk after your coffee.').generate('p_1', {
      deliveryMode: 'scheduled',
      deferRecord: true,
    });
    if (!outcome.ok || !outcome.record) throw new Error('expected a generated prompt with its record');
    const { record } = outcome;
    const lastPrompt = async () => (await store.flowStates.get('p_1'))?.stateData[DataKey.lastHabitPrompt];
    expect(await calls()).toEqual([]);
    expect(await store.events.list({ type: 'habit-prompt-generated' })).toEqual([]);
    expect(await lastPrompt()).toBeUndefined();

    // A transaction that fails after it keeps none of it.
    await expect(
      store.transaction(async () => {
        await record();
        throw new Error('the prompt could not be sent');
      }),
    ).rejects.toThrow('the prompt could not be sent');
    expect(await calls()).toEqual([]);
    expect(await lastPrompt()).toBeUndefined();

    await store.transaction(record);
    expect((await calls()).map((call) => [call.purpose, call.outcome])).toEqual([['prompt-generator', 'success']]);
    expect(await store.events.list({ type: 'habit-prompt-generated' })).toHaveLength(1);
    expect(await lastPrompt()).toBe('Walk after your coffee.');
  });

  it('still records the call when the model returned no prompt', async () => {
    const outcome = await generatorAnswering('   ').generate('p_1', { deliveryMode: 'scheduled' });
    expect(outcome).toMatchObject({ ok: false, error: 'The prompt generator returned an empty prompt.' });
    expect((await calls()).map((call) => [call.purpose, call.outcome])).toEqual([['prompt-generator', 'success']]);
    expect(await store.events.list({ type: 'habit-prompt-generated' })).toEqual([]);
  });
});
