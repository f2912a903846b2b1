/**
 * The plans of the hot statements (src/store/kysely/sql/), from their real text: every statement the modules declare
 * is explained on a migrated database, and each must use the index the benchmarks rely on and read no big table
 * whole. A statement added without an expectation here fails too, so that its plan is looked at.
 *
 * SQLite: `EXPLAIN QUERY PLAN` of the statement as prepared (LIMITs written in as they run). PostgreSQL (when
 * PROMPTPIPE_TEST_PG_URL is set): `EXPLAIN EXECUTE` of the statement prepared by its text with the generic plan (the
 * one a named statement ends up with), on tables holding some thousands of rows and analysed, so that the planner
 * weighs an index against a scan as it would in a study.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { allHotStatements, type HotStatement, sqliteTextFor } from '../../src/store/kysely/sql/hot-statement.ts';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { dropSchema } from '../support/postgres-schema.ts';

const url = process.env['PROMPTPIPE_TEST_PG_URL'];
if (!url) console.warn('PostgreSQL cases of hot-statement-plans.test.ts skipped: PROMPTPIPE_TEST_PG_URL is not set');

/** The tables that grow with a study: none of them may be read whole by a hot statement. */
const BIG_TABLES = [
  'jobs',
  'transcript',
  'inbound_messages',
  'events',
  'llm_calls',
  'deliveries',
  'conversation_messages',
  'flow_states',
  'participants',
  'participant_days',
];

/**
 * The index each statement must use, by name: SQLite's, then PostgreSQL's (null: nothing to look up, an insert; a
 * list: every one must appear). SQLite's automatic indexes are its primary keys and unique constraints.
 */
const EXPECTED: Record<string, { sqlite?: string[] | null; postgres?: string[] | null }> = {
  flow_state_read: { sqlite: ['sqlite_autoindex_flow_states_1'], postgres: ['flow_states_pkey'] },
  flow_state_write: { sqlite: null, postgres: null },
  participant_by_id: { sqlite: ['sqlite_autoindex_participants_1'], postgres: ['participants_pkey'] },
  conversation_latest: {
    sqlite: ['PRIMARY KEY (participant_id=?)'],
    postgres: ['conversation_messages_primary_key'],
  },
  conversation_insert: { sqlite: null, postgres: null },
  conversation_delete_before: {
    sqlite: ['PRIMARY KEY (participant_id=? AND seq<?)'],
    postgres: ['conversation_messages_primary_key'],
  },
  transcript_insert: { sqlite: null, postgres: null },
  transcript_latest: { sqlite: ['transcript_participant_id_index'], postgres: ['transcript_participant_id_index'] },
  transcript_after_last_message: {
    sqlite: ['transcript_participant_id_index'],
    postgres: ['transcript_participant_id_index'],
  },
  transcript_for_source_message: {
    sqlite: ['transcript_source_message_index'],
    postgres: ['transcript_source_message_index'],
  },
  inbound_insert: { sqlite: null, postgres: null },
  inbound_next_unprocessed: {
    sqlite: ['inbound_messages_participant_received_index'],
    postgres: ['inbound_messages_participant_received_index'],
  },
  inbound_mark_done: { sqlite: ['sqlite_autoindex_inbound_messages_1'], postgres: ['inbound_messages_pkey'] },
  event_insert: { sqlite: null, postgres: null },
  llm_call_insert: { sqlite: null, postgres: null },
  delivery_insert: { sqlite: null, postgres: null },
  // Only the outages going on now: a handful of rows, which PostgreSQL rightly reads whole.
  llm_outage_end: { sqlite: ['sqlite_autoindex_llm_outages_1'], postgres: [] },
  study_day_latest: { sqlite: ['PRIMARY KEY (participant_id=?)'], postgres: ['participant_days_primary_key'] },
  job_insert: { sqlite: null, postgres: null },
  job_cancel_pending_by_key: { sqlite: ['jobs_pending_dedup_key_index'], postgres: ['jobs_pending_dedup_key_index'] },
  job_earlier_active: {
    sqlite: ['jobs_participant_status_kind_order_index'],
    postgres: ['jobs_participant_status_kind_order_index'],
  },
  job_complete: { sqlite: ['sqlite_autoindex_jobs_1'], postgres: ['jobs_pkey'] },
  job_next_due: {
    sqlite: ['jobs_pending_run_at_order_index', 'jobs_running_lease_until_index'],
    postgres: ['jobs_pending_run_at_order_index', 'jobs_running_lease_until_index'],
  },
  jobs_claim: {
    postgres: [
      'jobs_pending_run_at_order_index',
      'jobs_running_lease_until_index',
      'jobs_participant_status_kind_order_index',
      'jobs_pkey',
    ],
  },
  jobs_claim_pending: {
    sqlite: ['jobs_pending_run_at_order_index', 'jobs_participant_status_kind_order_index'],
  },
  jobs_claim_expired: {
    sqlite: ['jobs_running_lease_until_index', 'jobs_participant_status_kind_order_index'],
  },
  jobs_claim_chosen: { sqlite: ['sqlite_autoindex_jobs_1'] },
};

/** A value for every parameter: null, except a LIMIT, which is written into SQLite's text and must be a number. */
function parameterCount(statement: HotStatement): number {
  const texts = [statement.postgres ?? ''];
  const numbers = texts.flatMap((text) => [...text.matchAll(/\$(\d+)/g)].map((match) => Number(match[1])));
  const sqliteIndexes = [...(statement.sqlite?.order ?? []), ...(statement.sqlite?.limits ?? [])].map((i) => i + 1);
  return Math.max(0, ...numbers, ...sqliteIndexes);
}

/** What is wrong with a statement's plan: a missing expectation, an index not used, a big table read whole. */
function planFaults(
  name: string,
  plan: string,
  expected: string[] | null | undefined,
  wholeTable: (table: string) => RegExp,
): string[] {
  if (expected === undefined) return [`${name}: no expected plan in hot-statement-plans.test.ts`];
  return [
    ...(expected ?? []).filter((index) => !plan.includes(index)).map((index) => `${name} does not use ${index}`),
    ...BIG_TABLES.filter((table) => wholeTable(table).test(plan)).map((table) => `${name} reads ${table} whole`),
  ].map((fault) => `${fault}:\n${plan}`);
}

const statements = () => allHotStatements();
// The modules declare their statements when imported; the stores below import them all.
await import('../../src/store/kysely/kysely-store.ts');

describe('hot statement plans on SQLite', () => {
  const directory = mkdtempSync(join(tmpdir(), 'promptpipe-hot-plans-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it('every hot statement has an expected plan, and uses its index without reading a big table whole', async () => {
    const filename = join(directory, 'plans.db');
    const store = await createSqliteStore({ filename, dashboardReads: 'in-process' });
    await store.close();
    const database = new BetterSqlite3(filename, { readonly: true });
    const faults: string[] = [];
    try {
      const onSqlite = statements().filter((statement) => statement.sqlite !== undefined);
      expect(onSqlite.length).toBeGreaterThan(20);
      for (const statement of onSqlite) {
        const sqliteText = statement.sqlite;
        if (sqliteText === undefined) continue;
        const values = Array.from({ length: parameterCount(statement) }, () => 10);
        const explained = database.prepare(`explain query plan ${sqliteTextFor(sqliteText, values)}`);
        const rows = explained.all(...sqliteText.order.map(() => null)) as { detail: string }[];
        const plan = rows.map((row) => row.detail).join('\n');
        // `SCAN t` without an index is the whole table; `SEARCH t` (the rowid's last entry for a new order) is not.
        const wholeTable = (table: string) => new RegExp(`^SCAN ${table}(?! USING)( |$)`, 'm');
        faults.push(...planFaults(statement.name, plan, EXPECTED[statement.name]?.sqlite, wholeTable));
      }
      expect(faults.join('\n\n')).toBe('');
    } finally {
      database.close();
    }
  });
});

describe.skipIf(!url)('hot statement plans on PostgreSQL', () => {
  const schema = `promptpipe_test_hot_plans_${process.pid}`;

  afterAll(async () => {
    if (!url) return;
    await dropSchema(url ?? '', schema);
  });

  it('every hot statement has an expected plan, and uses its index without reading a big table whole', async () => {
    const store = await createPostgresStore({ connectionString: url ?? '', schema });
    await store.close();
    const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
    await client.connect();
    const faults: string[] = [];
    try {
      await seed(client);
      await client.query('set plan_cache_mode = force_generic_plan');
      const onPostgres = statements().filter((statement) => statement.postgres !== undefined);
      expect(onPostgres.length).toBeGreaterThan(20);
      for (const statement of onPostgres) {
        const count = parameterCount(statement);
        await client.query(`prepare explained as ${statement.postgres}`);
        const values = count === 0 ? '' : `(${Array.from({ length: count }, () => 'null').join(', ')})`;
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain execute explained${values}`);
        await client.query('deallocate explained');
        const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
        const wholeTable = (table: string) => new RegExp(`Seq Scan on ${table}\\b`);
        faults.push(...planFaults(statement.name, plan, EXPECTED[statement.name]?.postgres, wholeTable));
      }
      expect(faults.join('\n\n')).toBe('');
    } finally {
      await client.end();
    }
  });
});

/** Rows enough for the planner to prefer an index where one serves: finished jobs and history mostly, as in a study. */
async function seed(client: pg.Client): Promise<void> {
  await client.query(`
    insert into participants (id, phone_number, status, enrolled_at, created_at, updated_at)
      select 'p' || g, '+1555' || g, 'active', now(), now(), now() from generate_series(1, 500) g;
    insert into flow_states (participant_id, flow_type, current_state, state_data, created_at, updated_at)
      select 'p' || g, 'study', 'COMMITMENT', '{}', now(), now() from generate_series(1, 500) g;
    insert into jobs (id, kind, participant_id, run_at, payload, status, attempts, max_attempts, dedup_key,
        created_at, updated_at)
      select 'j' || g, case when g % 3 = 0 then 'deliver' else 'daily-prompt' end, 'p' || (g % 500 + 1),
        now() - (g % 100) * interval '1 minute', '{}',
        case when g % 97 = 0 then 'pending' when g % 89 = 0 then 'running' else 'completed' end, 1, 3,
        'k' || g, now(), now()
      from generate_series(1, 20000) g;
    insert into transcript (participant_id, role, kind, content, source_message_id, created_at)
      select 'p' || (g % 500 + 1), case when g % 4 = 0 then 'user' else 'assistant' end,
        case when g % 4 = 1 then 'reply' else 'message' end, 'text', 'm' || g, now()
      from generate_series(1, 20000) g;
    insert into inbound_messages (id, channel, participant_id, from_phone, text, status, received_at)
      select 'i' || g, 'webhook', 'p' || (g % 500 + 1), '+1555', 'hi',
        case when g % 100 = 0 then 'received' else 'processed' end, now()
      from generate_series(1, 20000) g;
    insert into conversation_messages (participant_id, seq, message)
      select 'p' || (g % 500 + 1), g, '{}' from generate_series(1, 20000) g;
    insert into participant_days (participant_id, local_date, prompt_sent_at)
      select 'p' || (g % 500 + 1), to_char(date '2026-01-01' + (g / 500), 'YYYY-MM-DD'), now()
      from generate_series(1, 20000) g;
  `);
  // This schema's tables only: a bare ANALYZE would visit every schema of the database (other tests' too).
  await client.query(
    'analyze participants, flow_states, jobs, transcript, inbound_messages, conversation_messages, participant_days',
  );
}
