import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { moveStoredHistories } from '../../src/store/migrations/016-conversation-messages.ts';
import { migrateToLatest } from '../../src/store/migrations/migrate-to-latest.ts';
import { postgresDialect } from '../../src/store/postgres/postgres-dialect.ts';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { sqliteDialect } from '../../src/store/sqlite/sqlite-dialect.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';
import { urlWithSchema } from '../support/promptpipe-cluster.ts';

const NOW = new Date('2026-03-02T14:00:00.000Z');
const pgUrl = process.env['PROMPTPIPE_TEST_PG_URL'];
if (!pgUrl) console.warn('PostgreSQL case of the history migration skipped: PROMPTPIPE_TEST_PG_URL is not set');

const hello = { role: 'user', content: 'Hello "there"', timestamp: NOW.toISOString() };
const answer = { role: 'assistant', content: 'Hi!\nHow are you?', timestamp: NOW.toISOString() };

/** Writes, through the store, flow states as a database from before migration 016 holds them. */
async function writeOldStates(store: Store): Promise<void> {
  for (const [id, phone] of [
    ['p_1', '+15550000001'],
    ['p_2', '+15550000002'],
    ['p_3', '+15550000003'],
  ] as const) {
    await store.participants.create(participantFixture(id, phone, NOW));
  }
  const state = (participantId: string, data: Record<string, string>) => ({
    participantId,
    flowType: 'conversation' as const,
    currentState: 'CONVERSATION_ACTIVE' as const,
    stateData: data,
    createdAt: NOW,
    updatedAt: NOW,
  });
  await store.flowStates.save(
    state('p_1', {
      // A stored entry that is not a message was never part of the history the model saw: it is not moved.
      conversationHistory: JSON.stringify({ messages: [hello, { role: 'system', content: 'x' }, answer] }),
      conversationState: 'INTAKE',
    }),
  );
  await store.flowStates.save(state('p_2', { conversationHistory: 'not json', userProfile: '{}' }));
  await store.flowStates.save(state('p_3', { conversationState: 'FEEDBACK' }));
}

async function expectMoved(store: Store): Promise<void> {
  expect(await store.history.latest('p_1', 10)).toEqual([
    { seq: 1, message: JSON.stringify(hello) },
    { seq: 2, message: JSON.stringify(answer) },
  ]);
  expect((await store.flowStates.get('p_1'))?.stateData).toEqual({ conversationState: 'INTAKE' });
  // An unreadable history is dropped (it was read as empty before), the other keys stay.
  expect(await store.history.latest('p_2', 10)).toEqual([]);
  expect((await store.flowStates.get('p_2'))?.stateData).toEqual({ userProfile: '{}' });
  expect((await store.flowStates.get('p_3'))?.stateData).toEqual({ conversationState: 'FEEDBACK' });
}

/** Runs `test` on a SQLite database file holding {@link writeOldStates}, removed afterwards. */
async function withOldSqliteStates(test: (filename: string) => Promise<void>): Promise<void> {
  const directory = await mkdtemp(join(tmpdir(), 'promptpipe-history-migration-'));
  const filename = join(directory, 'promptpipe.db');
  try {
    const before = await createSqliteStore({ filename });
    await writeOldStates(before);
    await before.close();
    await test(filename);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

describe('migration 016: working histories move out of the flow state', () => {
  it('on SQLite', () =>
    withOldSqliteStates(async (filename) => {
      const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new SqliteDatabase(filename) }) });
      expect(await moveStoredHistories(db, sqliteDialect.schema)).toBe(2);
      await db.destroy();
      const after = await createSqliteStore({ filename });
      await expectMoved(after);
      await after.close();
    }));

  it('on SQLite, all or nothing: a failure halfway leaves the schema and every history as they were', () =>
    withOldSqliteStates(async (filename) => {
      // Back to the schema before migration 016, with a flow state whose participant is gone (written with foreign
      // keys off): moving its history breaks the foreign key, after p_1's was already moved.
      const raw = new SqliteDatabase(filename);
      raw.exec(`drop table conversation_messages; delete from kysely_migration where name like '016-%';
        pragma foreign_keys = off;
        insert into flow_states select 'p_gone', flow_type, current_state, state_data, created_at, updated_at
          from flow_states where participant_id = 'p_1';`);
      raw.close();
      const database = new SqliteDatabase(filename);
      database.pragma('foreign_keys = on');
      const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database }) });
      await expect(migrateToLatest(db, sqliteDialect.schema)).rejects.toThrow('016-conversation-messages');
      await db.destroy();
      const check = new SqliteDatabase(filename, { readonly: true });
      const tables = check.prepare(`select name from sqlite_schema where name = 'conversation_messages'`).all();
      const history = check
        .prepare(
          `select json_extract(state_data, '$.conversationHistory') from flow_states where participant_id = 'p_1'`,
        )
        .pluck()
        .get();
      check.close();
      expect(tables).toEqual([]);
      expect(history).toBe(JSON.stringify({ messages: [hello, { role: 'system', content: 'x' }, answer] }));
    }));

  describe.skipIf(!pgUrl)('on PostgreSQL', () => {
    const schema = `promptpipe_test_history_${randomBytes(4).toString('hex')}`;
    afterAll(async () => {
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      await client.query(`drop schema if exists "${schema}" cascade`);
      await client.end();
    });

    it('moves jsonb state data', async () => {
      const connectionString = pgUrl ?? '';
      const before = await createPostgresStore({ connectionString, schema });
      await writeOldStates(before);
      await before.close();
      const pool = new pg.Pool({ connectionString: urlWithSchema(connectionString, schema) });
      const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
      expect(await moveStoredHistories(db, postgresDialect.schema)).toBe(2);
      await db.destroy();
      const after = await createPostgresStore({ connectionString, schema });
      await expectMoved(after);
      await after.close();
    });
  });
});
