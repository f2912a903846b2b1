/**
 * The dashboard at study scale: a study of `participants` × `days` seeded straight into the tables
 * (seed-study.ts), then the wired application (in process, not listening) serves each dashboard page several times;
 * each time is the server's whole work for the page (routing, reads, rendering), measured around
 * `app.server.inject`. Runs on SQLite (a file, as in production) and on PostgreSQL when a URL is configured.
 *
 * Roster pages past the first are reached the way a browser reaches them: by following the page's own "Next" and
 * "Last" links (keyset links carry the key), so the benchmark measures the page a study team would actually get.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createApplication } from '../../src/main.ts';
import { backfillStudyDays } from '../../src/store/migrations/022-study-day-summary.ts';
import { postgresDialect } from '../../src/store/postgres/postgres-dialect.ts';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { sqliteDialect } from '../../src/store/sqlite/sqlite-dialect.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { formatMilliseconds } from '../support/report.ts';
import { POSTGRES_SEED, SQLITE_SEED, type StudyShape, seedStatements, studyNow } from './seed-study.ts';

export interface DashboardPageTime {
  database: string;
  page: string;
  url: string;
  runs: number;
  medianMs: number;
  maxMs: number;
  /** Response size, to show the page really rendered its rows. */
  bytes: number;
}

export interface DashboardBenchOptions {
  shape: StudyShape;
  /** Measured runs per page (after one untimed warm-up). */
  runs: number;
  /** Only the pages whose name contains one of these (all when empty). */
  pages: readonly string[];
  postgresUrl: string | undefined;
  log: (line: string) => void;
}

/** A page of the benchmark: its name, and how to find its URL from what the dashboard serves. */
interface PageSpec {
  name: string;
  url: (get: (url: string) => Promise<string>) => Promise<string>;
}

const linkOf = (page: string, rel: string): string | undefined => {
  const match = new RegExp(`<a [^>]*href="([^"]+)"[^>]*rel="${rel}"|<a [^>]*rel="${rel}"[^>]*href="([^"]+)"`).exec(
    page,
  );
  const href = match?.[1] ?? match?.[2];
  return href?.replaceAll('&amp;', '&').replaceAll('&#38;', '&');
};

/** Follows `rel="next"` links from the first roster page `count - 1` times; `?page=N` when the pager has none. */
async function nthRosterPage(get: (url: string) => Promise<string>, count: number): Promise<string> {
  let url = '/dashboard';
  for (let page = 1; page < count; page += 1) {
    const next = linkOf(await get(url), 'next');
    if (!next) return `/dashboard?page=${count}`;
    url = next;
  }
  return url;
}

const PAGES: readonly PageSpec[] = [
  { name: 'roster page 1', url: async () => '/dashboard' },
  { name: 'roster page 50', url: (get) => nthRosterPage(get, 50) },
  { name: 'roster page 50 by its number', url: async () => '/dashboard?page=50' },
  {
    name: 'roster last page',
    url: async (get) => linkOf(await get('/dashboard'), 'last') ?? '/dashboard?page=200',
  },
  { name: 'roster name search', url: async () => '/dashboard?search=grace' },
  { name: 'roster filter (FEEDBACK, idle)', url: async () => '/dashboard?sub_state=FEEDBACK&idle=yes' },
  { name: 'overview', url: async () => '/dashboard/overview' },
  { name: 'adherence grid', url: async () => '/dashboard/adherence' },
  {
    name: 'adherence grid, lowest first, page 2',
    url: async (get) =>
      linkOf(await get('/dashboard/adherence?sort=adherence'), 'next') ?? '/dashboard/adherence?sort=adherence',
  },
];

async function timePages(database: string, store: Store, options: DashboardBenchOptions): Promise<DashboardPageTime[]> {
  const config = loadConfig({
    API_ADDR: '127.0.0.1:0',
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: studyNow(options.shape).toISOString(),
    LOG_LEVEL: 'silent',
    PROMPTPIPE_ENV_FILE: '',
  });
  const app = await createApplication({ config, log: pino({ level: 'silent' }), store });
  const get = async (url: string): Promise<string> => {
    const response = await app.server.inject({ method: 'GET', url });
    if (response.statusCode !== 200) throw new Error(`GET ${url} answered ${response.statusCode}`);
    return response.body;
  };
  const results: DashboardPageTime[] = [];
  try {
    for (const spec of PAGES) {
      if (options.pages.length > 0 && !options.pages.some((name) => spec.name.includes(name))) continue;
      let url: string;
      let bytes: number;
      const times: number[] = [];
      try {
        url = await spec.url(get);
        // This first request warms up (statements prepared, pages cached); one over 10 s is the result.
        const first = performance.now();
        bytes = (await get(url)).length;
        const warmUp = performance.now() - first;
        if (warmUp > 10_000) times.push(warmUp);
      } catch (error) {
        options.log(`  ${database}: ${spec.name}: not measured (${error instanceof Error ? error.message : error})`);
        continue;
      }
      const runs = times.length === 0 ? options.runs : 0;
      for (let run = 0; run < runs; run += 1) {
        const start = performance.now();
        await get(url);
        times.push(performance.now() - start);
      }
      times.sort((a, b) => a - b);
      const result = {
        database,
        page: spec.name,
        url,
        runs: times.length,
        medianMs: times[Math.floor(times.length / 2)] ?? Number.NaN,
        maxMs: times.at(-1) ?? Number.NaN,
        bytes,
      };
      options.log(`  ${database}: ${spec.name}: ${formatMilliseconds(result.medianMs)} ms (${url})`);
      results.push(result);
    }
  } finally {
    await app.stop();
  }
  return results;
}

async function sqlitePages(options: DashboardBenchOptions): Promise<DashboardPageTime[]> {
  const directory = await mkdtemp(join(tmpdir(), 'promptpipe-dashboard-bench-'));
  const filename = join(directory, 'promptpipe.db');
  try {
    // Migrated by the store, seeded on a connection of its own, then opened again as the server opens it.
    await (await createSqliteStore({ filename })).close();
    const started = performance.now();
    const database = new SqliteDatabase(filename);
    // A bulk load: no journal (a failed seed is thrown away), a cache that holds the indexes being filled.
    database.pragma('journal_mode = OFF');
    database.pragma('synchronous = OFF');
    database.pragma('cache_size = -1000000');
    database.transaction(() => {
      for (const statement of seedStatements(options.shape, SQLITE_SEED)) database.exec(statement);
    })();
    // The study-day summary, filled as migration 022 fills it for a database that already has a history.
    const summary = new Kysely<unknown>({ dialect: new SqliteDialect({ database }) });
    await backfillStudyDays(summary, sqliteDialect.schema);
    database.pragma('journal_mode = WAL');
    await summary.destroy();
    options.log(`  sqlite: seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return await timePages('sqlite', await createSqliteStore({ filename }), options);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

async function postgresPages(connectionString: string, options: DashboardBenchOptions): Promise<DashboardPageTime[]> {
  const schema = `promptpipe_dashboard_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString });
  await admin.connect();
  try {
    await admin.query(`drop schema if exists ${schema} cascade`);
    await (await createPostgresStore({ connectionString, schema })).close();
    const started = performance.now();
    await admin.query(`set search_path = ${schema}`);
    await admin.query('begin');
    for (const statement of seedStatements(options.shape, POSTGRES_SEED)) await admin.query(statement);
    await admin.query('commit');
    const pool = new pg.Pool({ connectionString, max: 1, options: `-c search_path=${schema}` });
    const summary = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
    await backfillStudyDays(summary, postgresDialect.schema);
    await summary.destroy();
    // What autovacuum would have done by the time a study has a month of data.
    const tables = await admin.query<{ tablename: string }>('select tablename from pg_tables where schemaname = $1', [
      schema,
    ]);
    for (const { tablename } of tables.rows) await admin.query(`vacuum analyze ${schema}.${tablename}`);
    options.log(`  postgres: seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return await timePages('postgres', await createPostgresStore({ connectionString, schema }), options);
  } finally {
    await admin.query(`drop schema if exists ${schema} cascade`).catch(() => undefined);
    await admin.end();
  }
}

/** Seeds and measures on SQLite, then on PostgreSQL when a URL is given. */
export async function runDashboardPages(options: DashboardBenchOptions): Promise<DashboardPageTime[]> {
  const results = await sqlitePages(options);
  if (options.postgresUrl) results.push(...(await postgresPages(options.postgresUrl, options)));
  else options.log('  dashboard on PostgreSQL skipped: PROMPTPIPE_BENCH_PG_URL / PROMPTPIPE_TEST_PG_URL is not set');
  return results;
}

export function formatDashboardTable(shape: StudyShape, results: readonly DashboardPageTime[]): string {
  const header = `| dashboard page (${shape.participants.toLocaleString('en-US')} participants × ${shape.days} days) | database | runs | median ms | max ms | response |`;
  const rule = '| --- | --- | ---: | ---: | ---: | ---: |';
  const rows = results.map(
    (result) =>
      `| ${result.page} | ${result.database} | ${result.runs} | ${formatMilliseconds(result.medianMs)} | ${formatMilliseconds(result.maxMs)} | ${(result.bytes / 1024).toFixed(0)} kB |`,
  );
  return [header, rule, ...rows].join('\n');
}
