/**
 * The database behind an end-to-end benchmark's server processes: SQLite in the state directory (the default a server
 * starts with), or a fresh PostgreSQL schema shared by every instance (`DATABASE_URL` with the schema as the search
 * path of each connection), dropped at the end. Also seeds it directly and measures what it stores.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';

/** Which database a scenario runs on, and how many server instances share it. */
export interface ServerDatabase {
  /** SQLite when undefined. */
  readonly postgresUrl?: string;
  /** Server processes sharing the database (PostgreSQL only; SQLite is always 1). */
  readonly instances: number;
}

export const SQLITE_SINGLE: ServerDatabase = { instances: 1 };

/** "sqlite", "postgres, 1 instance", "postgres, 2 instances": the first column of the tables. */
export function databaseLabel(database: ServerDatabase): string {
  if (database.postgresUrl === undefined) return 'sqlite';
  return `postgres, ${database.instances} instance${database.instances === 1 ? '' : 's'}`;
}

export interface BenchDatabase {
  /** Variables that point a server at it (none for SQLite: the state directory holds it). */
  readonly environment: Record<string, string>;
  /** A store on it, for seeding; the caller closes it before the servers start. */
  openStore(): Promise<Store>;
  /** Bytes in use by every table and index, once the servers have stopped. */
  storedBytes(): Promise<number>;
  /** Drops the PostgreSQL schema; nothing for SQLite (the state directory is removed by the caller). */
  dispose(): Promise<void>;
}

async function runStatement<Row extends pg.QueryResultRow>(
  connectionString: string,
  statement: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query<Row>(statement, values)).rows;
  } finally {
    await client.end();
  }
}

function sqliteDatabase(stateDirectory: string): BenchDatabase {
  const filename = join(stateDirectory, 'promptpipe.db');
  return {
    environment: {},
    openStore: () => createSqliteStore({ filename }),
    async storedBytes() {
      const database = new SqliteDatabase(filename);
      try {
        database.pragma('wal_checkpoint(TRUNCATE)');
        const pages = Number(database.pragma('page_count', { simple: true }));
        const free = Number(database.pragma('freelist_count', { simple: true }));
        return (pages - free) * Number(database.pragma('page_size', { simple: true }));
      } finally {
        database.close();
      }
    },
    async dispose() {},
  };
}

async function postgresDatabase(url: string): Promise<BenchDatabase> {
  const schema = `promptpipe_bench_e2e_${randomBytes(4).toString('hex')}`;
  await runStatement(url, `create schema "${schema}"`);
  const separator = url.includes('?') ? '&' : '?';
  return {
    environment: { DATABASE_URL: `${url}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}` },
    openStore: () => createPostgresStore({ connectionString: url, schema }),
    async storedBytes() {
      const [row] = await runStatement<{ bytes: string }>(
        url,
        `select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint as bytes
           from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = $1 and c.relkind = 'r'`,
        [schema],
      );
      return Number(row?.bytes ?? 0);
    },
    async dispose() {
      await runStatement(url, `drop schema if exists "${schema}" cascade`);
    },
  };
}

export function openBenchDatabase(database: ServerDatabase, stateDirectory: string): Promise<BenchDatabase> {
  return database.postgresUrl === undefined
    ? Promise.resolve(sqliteDatabase(stateDirectory))
    : postgresDatabase(database.postgresUrl);
}

/** Linux counts process CPU time in clock ticks of 1/100 s (USER_HZ). */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds used so far by every `postgres` process on this machine (the database server shares the benchmark's
 * cores, so its share says whether a run is limited by the database or by the machine). Other work on the same
 * server counts too; 0 when the server runs elsewhere.
 */
export function postgresCpuSeconds(): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const commandEnd = stat.lastIndexOf(') ');
      if (!stat.slice(stat.indexOf('(') + 1, commandEnd).startsWith('postgres')) continue;
      const fields = stat.slice(commandEnd + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended while we read.
    }
  }
  return ticks / TICKS_PER_SECOND;
}
