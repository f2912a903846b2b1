import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FlowState } from '../../src/domain/flow-state.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const NOW = new Date('2026-03-02T14:00:00.000Z');

function stateOf(participantId: string, conversationState: string): FlowState {
  return {
    participantId,
    flowType: 'conversation',
    currentState: 'CONVERSATION_ACTIVE',
    stateData: { conversationState },
    createdAt: NOW,
    updatedAt: NOW,
  };
}

/** The SQLite store caches flow states (flow-state-cache.ts); these are the cases where a cache could lie. */
describe('flow state cache (SQLite store)', () => {
  let store: Store;
  beforeEach(async () => {
    store = await createSqliteStore({ filename: ':memory:' });
    await store.participants.create(participantFixture('participant_1', '+15550000001', NOW));
    await store.flowStates.save(stateOf('participant_1', 'INTAKE'));
  });
  afterEach(async () => {
    await store.close();
  });

  it('sees a write made outside a transaction after the value was cached', async () => {
    expect((await store.flowStates.get('participant_1'))?.stateData).toEqual({ conversationState: 'INTAKE' });
    await store.flowStates.save(stateOf('participant_1', 'FEEDBACK'));
    expect((await store.flowStates.get('participant_1'))?.stateData).toEqual({ conversationState: 'FEEDBACK' });
  });

  it('does not let a caller change the cached value by mutating what it read', async () => {
    const first = await store.flowStates.get('participant_1');
    if (!first) throw new Error('no flow state');
    first.stateData.conversationState = 'MUTATED';
    expect((await store.flowStates.get('participant_1'))?.stateData).toEqual({ conversationState: 'INTAKE' });
  });

  it('shows a transaction its own writes and everyone the committed value afterwards', async () => {
    await store.flowStates.get('participant_1');
    await store.transaction(async (tx) => {
      await tx.flowStates.save(stateOf('participant_1', 'FEEDBACK'));
      expect((await tx.flowStates.get('participant_1'))?.stateData).toEqual({ conversationState: 'FEEDBACK' });
    });
    expect((await store.flowStates.get('participant_1'))?.stateData).toEqual({ conversationState: 'FEEDBACK' });
  });

  it('forgets the writes of a transaction that rolled back', async () => {
    await store.flowStates.get('participant_1');
    await expect(
      store.transaction(async (tx) => {
        await tx.flowStates.save(stateOf('participant_1', 'FEEDBACK'));
        throw new Error('rolled back on purpose');
      }),
    ).rejects.toThrow('rolled back on purpose');
    expect((await store.flowStates.get('participant_1'))?.stateData).toEqual({ conversationState: 'INTAKE' });
  });

  it('keeps the writes of a nested call until the outer transaction ends', async () => {
    await expect(
      store.transaction(async (tx) => {
        await (tx as Store).transaction(async (inner) => inner.flowStates.save(stateOf('participant_1', 'FEEDBACK')));
        expect((await tx.flowStates.get('participant_1'))?.stateData).toEqual({ conversationState: 'FEEDBACK' });
        throw new Error('outer rolled back');
      }),
    ).rejects.toThrow('outer rolled back');
    expect((await store.flowStates.get('participant_1'))?.stateData).toEqual({ conversationState: 'INTAKE' });
  });

  it('forgets the state of a deleted participant (the database deletes it by cascade)', async () => {
    await store.flowStates.get('participant_1');
    expect(await store.participants.delete('participant_1')).toBe(true);
    expect(await store.flowStates.get('participant_1')).toBeUndefined();
  });

  it('forgets a deleted flow state, in or out of a transaction', async () => {
    await store.flowStates.get('participant_1');
    await store.transaction((tx) => tx.flowStates.delete('participant_1'));
    expect(await store.flowStates.get('participant_1')).toBeUndefined();
    await store.flowStates.save(stateOf('participant_1', 'INTAKE'));
    await store.flowStates.get('participant_1');
    await store.flowStates.delete('participant_1');
    expect(await store.flowStates.get('participant_1')).toBeUndefined();
  });
});
