/**
 * Hot statements (src/store/kysely/sql/): the SQLite text derived from the PostgreSQL one binds each value where the
 * PostgreSQL text put it, LIMITs are written in and checked, and on PostgreSQL the statements run as named prepared
 * statements (when PROMPTPIPE_TEST_PG_URL is set).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import { sqlite, sqliteTextFor } from '../../src/store/kysely/sql/hot-statement.ts';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';
import { dropSchema } from '../support/postgres-schema.ts';

const url = process.env['PROMPTPIPE_TEST_PG_URL'];
if (!url) console.warn('PostgreSQL cases of hot-statement.test.ts skipped: PROMPTPIPE_TEST_PG_URL is not set');

describe('the SQLite form of a hot statement', () => {
  it('writes each parameter as +? and binds the values in the order the text uses them, repeats included', () => {
    const converted = sqlite('select * from t where b = $2 and a = $1 or c = $2');
    expect(converted.text).toBe('select * from t where b = +? and a = +? or c = +?');
    expect(converted.order).toEqual([1, 0, 1]);
  });

  it('writes a LIMIT into the text as a number, and refuses one that is not a non-negative integer', () => {
    const converted = sqlite('select * from t where a = $1 order by id limit $2');
    expect(converted.order).toEqual([0]);
    expect(sqliteTextFor(converted, ['x', 5])).toBe('select * from t where a = +? order by id limit 5');
    for (const bad of [-1, 1.5, '3; drop table t', null]) {
      expect(() => sqliteTextFor(converted, ['x', bad])).toThrow(AppError);
    }
  });

  it('gives each limit its own text, however many limits a statement runs with', () => {
    const converted = sqlite('select * from t order by id limit $1');
    for (let round = 0; round < 2; round += 1) {
      for (let limit = 0; limit < 40; limit += 1) {
        expect(sqliteTextFor(converted, [limit])).toBe(`select * from t order by id limit ${limit}`);
      }
    }
    expect(() => sqliteTextFor(converted, ['1; drop table t'])).toThrow(AppError);
  });
});

describe.skipIf(!url)('hot statements on PostgreSQL', () => {
  const schema = `promptpipe_test_hot_${randomBytes(4).toString('hex')}`;
  let store: Store | undefined;

  afterAll(async () => {
    await store?.close();
    await dropSchema(url ?? '', schema);
  });

  it('run as named prepared statements, and every other query as before', async () => {
    // Every query of the pool's clients, as pg receives it (spied before the store's first connection exists).
    const sent: unknown[] = [];
    const original = pg.Client.prototype.query as (...parameters: unknown[]) => unknown;
    const query = vi.spyOn(pg.Client.prototype, 'query');
    query.mockImplementation(function (this: pg.Client, ...parameters: unknown[]) {
      sent.push(parameters[0]);
      return original.apply(this, parameters);
    } as never);
    try {
      store = await createPostgresStore({ connectionString: url ?? '', schema });
      await store.participants.create(participantFixture('p-hot', '+15550000001', new Date()));
      expect((await store.participants.get('p-hot'))?.id).toBe('p-hot');
      expect(await store.flowStates.get('p-hot')).toBeUndefined();
    } finally {
      query.mockRestore();
    }
    const named = sent.filter((entry): entry is { name: string; text: string } => typeof entry === 'object');
    expect(named.map((entry) => entry.name)).toEqual(expect.arrayContaining(['participant_by_id', 'flow_state_read']));
    expect(named.find((entry) => entry.name === 'flow_state_read')?.text).toMatch(/^select .* from flow_states where/);
    // The participant's insert is built by Kysely, not a hot statement: sent unnamed, as text and values.
    expect(sent.some((entry) => typeof entry === 'string' && entry.startsWith('insert into "participants"'))).toBe(
      true,
    );
  });
});
