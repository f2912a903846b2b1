/**
 * PostgreSQL's flow-state cache (src/store/postgres/locked-flow-state-cache.ts): while the participant's lock is held
 * (`withLockScope`, entered by the coordinator), the state is read from the database once; a transaction's writes go
 * to the database once, before it commits; a rollback leaves the committed state; once the lock is released, reads go
 * to the database again. Statements are counted as pg receives them.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FlowState } from '../../src/domain/flow-state.ts';
import { withLockScope } from '../../src/store/postgres/locked-flow-state-cache.ts';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';
import { dropSchema } from '../support/postgres-schema.ts';

const url = process.env['PROMPTPIPE_TEST_PG_URL'];
if (!url) console.warn('locked-flow-state-cache.test.ts skipped: PROMPTPIPE_TEST_PG_URL is not set');

const AT = new Date('2026-03-02T09:00:00.000Z');

function stateWith(participantId: string, step: number): FlowState {
  return {
    participantId,
    flowType: 'conversation',
    currentState: 'COMMITMENT' as FlowState['currentState'],
    stateData: { hasSeenOrientation: step > 0 } as FlowState['stateData'],
    createdAt: AT,
    updatedAt: new Date(AT.getTime() + step * 1000),
  };
}

describe.skipIf(!url)('flow states under the participant lock (PostgreSQL)', () => {
  const schema = `promptpipe_test_locked_cache_${randomBytes(4).toString('hex')}`;
  let store: Store;
  /** Hot statements sent, by name. */
  const sent: string[] = [];
  const count = (name: string) => sent.filter((entry) => entry === name).length;

  beforeAll(async () => {
    const original = pg.Client.prototype.query as (...parameters: unknown[]) => unknown;
    vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...parameters: unknown[]) {
      const [query] = parameters;
      if (typeof query === 'object' && query !== null && 'name' in query) sent.push(String(query.name));
      return original.apply(this, parameters);
    } as never);
    store = await createPostgresStore({ connectionString: url ?? '', schema });
    for (const id of ['p1', 'p2', 'p3']) {
      await store.participants.create(participantFixture(id, `+1555000000${id.slice(1)}`, AT));
      await store.flowStates.save(stateWith(id, 0));
    }
  });

  afterAll(async () => {
    vi.restoreAllMocks();
    await store?.close();
    await dropSchema(url ?? '', schema);
  });

  it('reads the state from the database once while the lock is held, and every time without it', async () => {
    const before = count('flow_state_read');
    await withLockScope('p1', async () => {
      for (let read = 0; read < 3; read++) expect((await store.flowStates.get('p1'))?.currentState).toBe('COMMITMENT');
    });
    expect(count('flow_state_read') - before).toBe(1);
    await store.flowStates.get('p1');
    await store.flowStates.get('p1');
    expect(count('flow_state_read') - before).toBe(3);
  });

  it('writes a transaction’s changes once, before it commits, and serves the committed state from memory', async () => {
    const reads = count('flow_state_read');
    const writes = count('flow_state_write');
    await withLockScope('p2', async () => {
      await store.transaction(async (tx) => {
        for (let step = 1; step <= 4; step++) await tx.flowStates.save(stateWith('p2', step));
        expect((await tx.flowStates.get('p2'))?.updatedAt).toEqual(stateWith('p2', 4).updatedAt);
      });
      expect(count('flow_state_write') - writes).toBe(1);
      expect((await store.flowStates.get('p2'))?.updatedAt).toEqual(stateWith('p2', 4).updatedAt);
    });
    expect(count('flow_state_read') - reads).toBe(0);
    // The database holds the last value (read without the lock, so from the database).
    expect((await store.flowStates.get('p2'))?.updatedAt).toEqual(stateWith('p2', 4).updatedAt);
  });

  it('keeps the committed state after a rollback, in the database and in what the lock’s holder reads next', async () => {
    await withLockScope('p3', async () => {
      expect((await store.flowStates.get('p3'))?.updatedAt).toEqual(AT);
      await expect(
        store.transaction(async (tx) => {
          await tx.flowStates.save(stateWith('p3', 7));
          throw new Error('the turn failed');
        }),
      ).rejects.toThrow('the turn failed');
      expect((await store.flowStates.get('p3'))?.updatedAt).toEqual(AT);
    });
    expect((await store.flowStates.get('p3'))?.updatedAt).toEqual(AT);
  });

  it('forgets a deleted participant’s state', async () => {
    await withLockScope('p1', async () => {
      expect(await store.flowStates.get('p1')).toBeDefined();
      await store.participants.delete('p1');
      expect(await store.flowStates.get('p1')).toBeUndefined();
    });
  });
});
