/**
 * `migrate-from-original` in process, against a database shaped like the original's (SQLite, and PostgreSQL with
 * PROMPTPIPE_TEST_PG_URL): a dry run reports and writes nothing; `--apply` imports in one transaction what it
 * reported; a second run imports nothing new.
 */

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMigrateFromOriginal } from '../../src/cli/migrate-from-original-command.ts';
import { loadConfig } from '../../src/config.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import { readHistory } from '../../src/engine/conversation-history.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import {
  ADA,
  ADA_REMEMBERS,
  BEN,
  BEN_REMEMBERS,
  CY,
  createOriginalPostgresDatabase,
  createOriginalSqliteDatabase,
  MIGRATION_TIME,
} from '../support/original-database-fixture.ts';

const pgUrl = process.env['PROMPTPIPE_TEST_PG_URL'];
const pgSchemas: string[] = [];
let directory: string;
let store: Store;
let output: string[];

const config = loadConfig(
  { PROMPTPIPE_CLOCK: 'manual', PROMPTPIPE_CLOCK_START: MIGRATION_TIME, LOG_LEVEL: 'silent' },
  { fileExists: () => false },
);

async function migrate(from: string, options: { apply?: boolean; json?: boolean } = {}) {
  output = [];
  return runMigrateFromOriginal(
    { from, ...options },
    {
      config,
      // The store stays open across runs: each run closes what it was given, so it gets a view that does not close.
      openStore: async () => ({ ...store, close: async () => undefined }),
      log: pino({ level: 'silent' }),
      stdout: { write: (text: string) => output.push(text) } as unknown as NodeJS.WritableStream,
      newId: sequentialIds(),
    },
  );
}

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'promptpipe-original-db-'));
  store = await createSqliteStore({ filename: ':memory:' });
});
afterEach(async () => {
  await store.close();
  await rm(directory, { recursive: true, force: true });
});
afterAll(async () => {
  if (!pgUrl || pgSchemas.length === 0) return;
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  for (const schema of pgSchemas) await client.query(`drop schema if exists "${schema}" cascade`);
  await client.end();
});

function sqliteOriginal(): string {
  const path = join(directory, 'state.db');
  createOriginalSqliteDatabase(path);
  return `file:${path}?_foreign_keys=on`;
}

describe('migrate-from-original', () => {
  it('reports what it will import and what it cannot, and writes nothing without --apply', async () => {
    await migrate(sqliteOriginal());
    const report = output.join('');
    expect(report).toContain('3 participant(s) (2 in FEEDBACK, 1 in INTAKE), 1 with a profile');
    expect(report).toContain('5 history message(s)');
    expect(report).toContain('2 daily schedule(s)');
    expect(report).toContain('1 pending timer(s)');
    expect(report).toContain('2 response(s), 2 receipt(s)');
    expect(report).toContain('participant p_unreadable: phone number "12" cannot be read');
    expect(report).toContain('1 queued outgoing message(s) the original never sent');
    expect(report).toContain('1 response hook(s)');
    expect(report).toContain('Dry run: nothing was written');
    expect(await store.participants.count()).toBe(0);
    expect(await store.originalRecords.responses()).toEqual([]);
  });

  it('imports participants with their profile, sub-state, history, schedule and timers, and skips the served day', async () => {
    const { outcome } = await migrate(sqliteOriginal(), { apply: true });
    expect(outcome).toMatchObject({ participants: 3, messages: 5, schedules: 1, timers: 1, responses: 2, receipts: 2 });

    const ada = await store.participants.get(ADA.id);
    expect(ada).toMatchObject({ phoneNumber: ADA.e164, name: 'Ada', timezone: 'America/Toronto', status: 'active' });
    expect((await store.participants.get(BEN.id))?.phoneNumber).toBe(BEN.e164);
    const state = (await store.flowStates.get(ADA.id))?.stateData ?? {};
    expect(state.conversationState).toBe('FEEDBACK');
    expect(JSON.parse(state.userProfile ?? '{}')).toMatchObject({
      intensity: 'high',
      tone: { tone_tags: ['warm', 'concise'] },
    });
    expect(state.dailyPromptReminderTimerID).not.toBe('job_original_reminder');

    // The original sent today's prompt at 08:00 (an hour ahead); ours goes 10 minutes ahead, so without the served
    // day it would go again at 08:50 today. The next one is tomorrow's.
    const [daily] = await store.jobs.listPending({ participantId: ADA.id, kind: 'daily_prompt' });
    expect(daily?.runAt.toISOString()).toBe('2026-03-03T13:50:00.000Z');
    const [reminder] = await store.jobs.listPending({ participantId: ADA.id, kind: 'daily_prompt_reminder' });
    expect(reminder?.runAt.toISOString()).toBe('2026-03-02T18:00:00.000Z');
    expect(state.dailyPromptReminderTimerID).toBe(reminder?.id);
    // Paused: the schedule is kept but not armed.
    expect(await store.jobs.listPending({ participantId: CY.id })).toEqual([]);

    const transcript = await store.transcript.list(ADA.id);
    expect(transcript.map((entry) => [entry.role, entry.kind, entry.module])).toEqual([
      ['assistant', 'reply', 'imported'],
      ['user', 'message', 'imported'],
      ['assistant', 'reply', 'imported'],
    ]);
    expect((await readHistory(store, BEN.id)).map((message) => message.content)).toContain(BEN_REMEMBERS);
    expect((await readHistory(store, ADA.id)).map((message) => message.content)).toContain(ADA_REMEMBERS);
    const responses = await store.originalRecords.responses();
    expect(responses.map((response) => [response.from, response.source])).toEqual([
      [ADA.e164, 'imported'],
      ['+15557654321', 'imported'],
    ]);
    expect(await store.originalRecords.receipts({ phoneNumber: ADA.e164 })).toHaveLength(2);
  });

  it('imports nothing new when run again', async () => {
    const from = sqliteOriginal();
    await migrate(from, { apply: true });
    const again = await migrate(from, { apply: true, json: true });
    expect(again.outcome).toMatchObject({ participants: 0, messages: 0, responses: 0, receipts: 0 });
    const report = JSON.parse(output.join('')) as { already_imported: unknown; will_import: { participants: number } };
    expect(report.will_import.participants).toBe(0);
    expect(report.already_imported).toEqual({ participants: 3, responses_and_receipts: 4 });
    expect(await store.participants.count()).toBe(3);
    expect(await store.transcript.list(ADA.id)).toHaveLength(3);
  });

  it('refuses a database that is not the original’s, and a file that is not there', async () => {
    await expect(migrate(join(directory, 'missing.db'))).rejects.toThrow(/cannot open the SQLite file/);
    const other = join(directory, 'other.db');
    const { default: SqliteDatabase } = await import('better-sqlite3');
    new SqliteDatabase(other).close();
    await expect(migrate(other)).rejects.toThrow(/not an original PromptPipe database/);
  });

  it.skipIf(!pgUrl)('reads the same study from the original’s PostgreSQL database', async () => {
    const schema = `promptpipe_original_${randomBytes(4).toString('hex')}`;
    pgSchemas.push(schema);
    await createOriginalPostgresDatabase(pgUrl ?? '', schema);
    const dsn = `${pgUrl}${pgUrl?.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const { outcome } = await migrate(dsn, { apply: true });
    expect(outcome).toMatchObject({ participants: 3, messages: 5, schedules: 1, timers: 1, responses: 2, receipts: 2 });
    expect(output.join('')).toContain('Original PromptPipe database: the PostgreSQL database');
    expect(output.join('')).not.toContain(pgUrl ?? '');
  });
});
