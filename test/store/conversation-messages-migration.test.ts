import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { moveStoredHistories } from '../../src/store/migrations/016-conversation-messages.ts';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
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
    state('p_1', { conversationHistory: JSON.stringify({ messages: [hello, answer] }), conversationState: 'INTAKE' }),
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

describe('migration 016: working histories move out of the flow state', () => {
  it('on SQLite', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'promptpipe-history-migration-'));
    const filename = join(directory, 'promptpipe.db');
    try {
      const before = await createSqliteStore({ filename });
      await writeOldStates(before);
      await before.close();
      const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new SqliteDatabase(filename) }) });
      expect(await moveStoredHistories(db)).toBe(2);
      await db.destroy();
      const after = await createSqliteStore({ filename });
      await expectMoved(after);
      await after.close();
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

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
      expect(await moveStoredHistories(db)).toBe(2);
      await db.destroy();
      const after = await createPostgresStore({ connectionString, schema });
      await expectMoved(after);
      await after.close();
    });
  });
});
