/**
 * The databases the benchmarks run against. Every `open()` gives a fresh, migrated, empty store, so one benchmark's
 * rows never slow down the next:
 * - SQLite: a file in a new temporary directory (WAL journal, as in production), deleted on dispose;
 * - PostgreSQL: a new schema (the store's `schema` option), dropped on dispose. Only when a URL is configured.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createSqliteStore, DEFAULT_SQLITE_SYNCHRONOUS } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import type { BenchmarkStore, StoreTarget } from './benchmark.ts';

/** The environment variables naming the PostgreSQL server, most specific first. */
export const POSTGRES_URL_VARIABLES = ['PROMPTPIPE_BENCH_PG_URL', 'PROMPTPIPE_TEST_PG_URL'] as const;

/** The configured PostgreSQL URL, or undefined when none of {@link POSTGRES_URL_VARIABLES} is set. */
export function postgresUrlFromEnvironment(): string | undefined {
  for (const variable of POSTGRES_URL_VARIABLES) {
    const value = process.env[variable]?.trim();
    if (value) return value;
  }
  return undefined;
}

/** Names of the file systems a benchmark directory is likely to sit on, by `statfs` magic number. */
const FILE_SYSTEM_NAMES: Readonly<Record<number, string>> = {
  61267: 'ext4',
  1481003842: 'xfs',
  2435016766: 'btrfs',
  16914836: 'tmpfs',
  2035054128: 'overlayfs',
  801189825: 'zfs',
  26985: 'nfs',
};

/**
 * What the numbers depend on: the SQLite version, the store's durability mode (the default, group commit: SQLite at
 * synchronous=NORMAL, the WAL fsynced only where `Store.durable()` is awaited, which the engine and store rows never
 * do) and the file system, read from a probe database in `directory`.
 */
function describeSqlite(directory: string): string {
  const probeDirectory = mkdtempSync(join(directory, 'promptpipe-bench-probe-'));
  try {
    const database = new SqliteDatabase(join(probeDirectory, 'probe.db'));
    try {
      database.pragma('journal_mode = WAL');
      const version = String(database.prepare('select sqlite_version()').pluck().get());
      const fileSystemType = statfsSync(probeDirectory).type;
      const fileSystem = FILE_SYSTEM_NAMES[fileSystemType] ?? `file system 0x${fileSystemType.toString(16)}`;
      return `SQLite ${version} (better-sqlite3), file in ${directory} (${fileSystem}), WAL, SQLITE_SYNCHRONOUS=${DEFAULT_SQLITE_SYNCHRONOUS} (synchronous=NORMAL + group commit)`;
    } finally {
      database.close();
    }
  } finally {
    rmSync(probeDirectory, { recursive: true, force: true });
  }
}

/**
 * A file-backed SQLite store per `open()`, in its own temporary directory under `parentDirectory` (default: the
 * system's temporary directory), opened exactly as production opens it.
 */
export function sqliteTarget(parentDirectory: string = tmpdir()): StoreTarget {
  return {
    name: 'sqlite',
    description: describeSqlite(parentDirectory),
    async open(): Promise<BenchmarkStore> {
      const directory = await mkdtemp(join(parentDirectory, 'promptpipe-bench-'));
      try {
        const store = await createSqliteStore({ filename: join(directory, 'bench.db') });
        return {
          store,
          async dispose() {
            try {
              await store.close();
            } finally {
              await rm(directory, { recursive: true, force: true });
            }
          },
        };
      } catch (error) {
        await rm(directory, { recursive: true, force: true });
        throw error;
      }
    },
  };
}

/** Runs `statement` on a short-lived connection of its own. */
async function runStatement<Row extends pg.QueryResultRow>(
  connectionString: string,
  statement: string,
): Promise<Row[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query<Row>(statement)).rows;
  } finally {
    await client.end();
  }
}

/**
 * A PostgreSQL store per `open()`, each in a new schema `promptpipe_bench_<run>_<n>` that dispose drops. Connecting
 * once up front turns a wrong URL into one clear error before any benchmark starts.
 */
export async function postgresTarget(connectionString: string): Promise<StoreTarget> {
  const [row] = await runStatement<{ server_version: string }>(connectionString, 'show server_version');
  const runId = randomBytes(4).toString('hex');
  let opened = 0;
  return {
    name: 'postgres',
    description: `PostgreSQL ${row?.server_version ?? '(unknown version)'}, a fresh schema per benchmark`,
    async open(): Promise<BenchmarkStore> {
      opened += 1;
      const schema = `promptpipe_bench_${runId}_${opened}`;
      const dropSchema = () => runStatement(connectionString, `drop schema if exists "${schema}" cascade`);
      try {
        const store = await createPostgresStore({ connectionString, schema });
        return {
          store,
          async dispose() {
            try {
              await store.close();
            } finally {
              await dropSchema();
            }
          },
        };
      } catch (error) {
        await dropSchema();
        throw error;
      }
    },
  };
}

/** Opens a store on `target`, runs `work` with it and always disposes of it. */
export async function withStore<T>(target: StoreTarget, work: (store: Store) => Promise<T>): Promise<T> {
  const opened = await target.open();
  try {
    return await work(opened.store);
  } finally {
    await opened.dispose();
  }
}
