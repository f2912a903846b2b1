import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { withFlowStateCache } from '../flow-state-cache.ts';
import type { Database } from '../kysely/database.ts';
import { createKyselyStore } from '../kysely/kysely-store.ts';
import { migrateToLatest } from '../migrations/migrate-to-latest.ts';
import type { Store } from '../store.ts';
import { sqliteDialect } from './sqlite-dialect.ts';
import { withStatementCache } from './statement-cache.ts';

export interface SqliteStoreOptions {
  /** A file path, or `':memory:'` for a private in-memory database (tests). */
  filename: string;
  /** How long a statement waits for another process's write lock before failing. Default 5 s. */
  busyTimeoutMs?: number;
  /**
   * SQLite's `synchronous` level. `full` (the default) makes every commit durable even through a power loss. `normal`
   * skips the sync at each commit in WAL mode: a process crash still loses nothing committed, but a power loss or
   * kernel crash may lose the last commits. An explicit choice for deployments that want the speed.
   */
  synchronous?: 'full' | 'normal';
}

/**
 * Opens (creating if needed) and migrates a SQLite database.
 *
 * Kysely drives better-sqlite3 through one connection behind a mutex: while `store.transaction(fn)` runs, a query on
 * `store` itself (instead of the `tx` repositories) waits for the transaction that waits for it, and never returns.
 */
export async function createSqliteStore(options: SqliteStoreOptions): Promise<Store> {
  const database = new SqliteDatabase(options.filename);
  try {
    // WAL lets readers (a dashboard, a backup) proceed while the server writes; in-memory databases have no journal.
    if (options.filename !== ':memory:') database.pragma('journal_mode = WAL');
    database.pragma('foreign_keys = ON');
    database.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    database.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });
    try {
      await migrateToLatest(db as Kysely<unknown>, sqliteDialect.schema);
    } catch (error) {
      await db.destroy();
      throw error;
    }
    // One process owns a SQLite database, so its flow states can be cached (see flow-state-cache.ts).
    return withFlowStateCache(createKyselyStore({ db, dialect: sqliteDialect }));
  } catch (error) {
    if (database.open) database.close();
    throw error;
  }
}
