import { describe, expect, it } from 'vitest';
import type { FlowState } from '../../src/domain/flow-state.ts';
import { withFlowStateCache } from '../../src/store/flow-state-cache.ts';
import type { FlowStateRepository, Store } from '../../src/store/store.ts';

const NOW = new Date('2026-03-02T14:00:00.000Z');

function stateOf(participantId: string, step: string): FlowState {
  return {
    participantId,
    flowType: 'conversation',
    currentState: 'CONVERSATION_ACTIVE',
    stateData: { conversationState: step },
    createdAt: NOW,
    updatedAt: NOW,
  };
}

/**
 * A store that only keeps flow states, in memory, and logs every call the cache makes to it: `begin`, `save <id>
 * <step>`, `delete <id>`, `commit`, `rollback`.
 */
function loggingStore(): { store: Store; log: string[]; rows: Map<string, FlowState> } {
  const log: string[] = [];
  const rows = new Map<string, FlowState>();
  const flowStates: FlowStateRepository = {
    async get(participantId) {
      return rows.get(participantId);
    },
    async save(state) {
      log.push(`save ${state.participantId} ${state.stateData.conversationState}`);
      rows.set(state.participantId, state);
    },
    async delete(participantId) {
      log.push(`delete ${participantId}`);
      rows.delete(participantId);
    },
  };
  const store = {
    flowStates,
    participants: {},
    async transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
      log.push('begin');
      const saved = new Map(rows);
      try {
        const result = await fn(store);
        log.push('commit');
        return result;
      } catch (error) {
        rows.clear();
        for (const [id, state] of saved) rows.set(id, state);
        log.push('rollback');
        throw error;
      }
    },
  } as unknown as Store;
  return { store, log, rows };
}

describe('flow state cache: writes inside a transaction', () => {
  it('writes each changed state once, its last value, before the commit', async () => {
    const inner = loggingStore();
    const store = withFlowStateCache(inner.store);
    await store.transaction(async (tx) => {
      await tx.flowStates.save(stateOf('participant_1', 'one'));
      await tx.flowStates.save(stateOf('participant_2', 'other'));
      await tx.flowStates.save(stateOf('participant_1', 'two'));
      expect((await tx.flowStates.get('participant_1'))?.stateData.conversationState).toBe('two');
      await tx.flowStates.save(stateOf('participant_1', 'three'));
      expect(inner.log).toEqual(['begin']);
    });
    expect(inner.log).toEqual(['begin', 'save participant_1 three', 'save participant_2 other', 'commit']);
    expect((await store.flowStates.get('participant_1'))?.stateData.conversationState).toBe('three');
  });

  it('joins nested calls: one write at the end of the outermost transaction', async () => {
    const inner = loggingStore();
    const store = withFlowStateCache(inner.store);
    await store.transaction(async (tx) => {
      await (tx as Store).transaction(async (nested) => nested.flowStates.save(stateOf('participant_1', 'nested')));
      await tx.flowStates.save(stateOf('participant_1', 'outer'));
    });
    expect(inner.log).toEqual(['begin', 'save participant_1 outer', 'commit']);
  });

  it('deletes at once, and a deletion cancels the write held before it', async () => {
    const inner = loggingStore();
    const store = withFlowStateCache(inner.store);
    await store.flowStates.save(stateOf('participant_1', 'stored'));
    await store.transaction(async (tx) => {
      await tx.flowStates.save(stateOf('participant_1', 'changed'));
      await tx.flowStates.delete('participant_1');
      expect(await tx.flowStates.get('participant_1')).toBeUndefined();
    });
    expect(inner.log).toEqual(['save participant_1 stored', 'begin', 'delete participant_1', 'commit']);
    expect(inner.rows.has('participant_1')).toBe(false);

    inner.log.length = 0;
    await store.transaction(async (tx) => {
      await tx.flowStates.delete('participant_2');
      await tx.flowStates.save(stateOf('participant_2', 'recreated'));
    });
    expect(inner.log).toEqual(['begin', 'delete participant_2', 'save participant_2 recreated', 'commit']);
  });

  it('writes nothing when the transaction fails, and still writes at once outside one', async () => {
    const inner = loggingStore();
    const store = withFlowStateCache(inner.store);
    await expect(
      store.transaction(async (tx) => {
        await tx.flowStates.save(stateOf('participant_1', 'lost'));
        throw new Error('failed on purpose');
      }),
    ).rejects.toThrow('failed on purpose');
    expect(inner.log).toEqual(['begin', 'rollback']);
    expect(await store.flowStates.get('participant_1')).toBeUndefined();

    await store.flowStates.save(stateOf('participant_1', 'direct'));
    expect(inner.log.at(-1)).toBe('save participant_1 direct');
  });

  it('fails the transaction when the held write fails, and caches nothing of it', async () => {
    const inner = loggingStore();
    const failing: Store = {
      ...inner.store,
      flowStates: {
        ...inner.store.flowStates,
        async save() {
          throw new Error('disk full');
        },
      },
    };
    failing.transaction = (fn) => inner.store.transaction(() => fn(failing));
    const store = withFlowStateCache(failing);
    await expect(
      store.transaction((tx) => tx.flowStates.save(stateOf('participant_1', 'never stored'))),
    ).rejects.toThrow('disk full');
    expect(inner.log).toEqual(['begin', 'rollback']);
    expect(await store.flowStates.get('participant_1')).toBeUndefined();
  });
});
