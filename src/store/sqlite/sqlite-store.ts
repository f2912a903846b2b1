import SqliteDatabase from 'better-sqlite3';
import { Kysely } from 'kysely';
import { AppError } from '../../domain/errors.ts';
import { withFlowStateCache } from '../flow-state-cache.ts';
import type { Database } from '../kysely/database.ts';
import { createKyselyStore } from '../kysely/kysely-store.ts';
import { runHotStatementsDirectly } from '../kysely/sql/hot-statement.ts';
import { migrateToLatest, pendingMigrations } from '../migrations/migrate-to-latest.ts';
import type { Store } from '../store.ts';
import { createUnitOfWorkScope } from '../unit-of-work.ts';
import { createDashboardReader } from './dashboard-reader.ts';
import { createGroupCommit } from './group-commit.ts';
import { withParticipantCache } from './participant-cache.ts';
import { withRecentTranscriptCache } from './recent-transcript-cache.ts';
import { sqliteDialect } from './sqlite-dialect.ts';
import { withStatementCache } from './statement-cache.ts';
import { UnaryPlusParameterSqliteDialect } from './unary-plus-parameters.ts';

export interface SqliteStoreOptions {
  /** A file path, or `':memory:'` for a private in-memory database (tests). */
  filename: string;
  /** How long a statement waits for another process's write lock before failing. Default 5 s. */
  busyTimeoutMs?: number;
  /**
   * When commits reach the disk. A process crash never loses a commit in any of them; they differ on a power loss
   * (or kernel crash):
   * - `group` (the default): commits are synced in groups, off the event loop, before anything outside hears of
   *   them (`Store.durable()`: before an HTTP response, before a message goes to a channel), so nothing acknowledged
   *   or sent is lost (group-commit.ts).
   * - `full`: SQLite's own `synchronous=FULL`, an fsync at every commit, on the event loop (slower).
   * - `normal`: no sync until a checkpoint: a power loss may lose the last commits, acknowledged ones included. An
   *   explicit choice for deployments that want the speed.
   */
  synchronous?: SqliteSynchronous;
  /**
   * Reads only, beside the process that owns the database (a CLI listing or export while the server runs): opened
   * read-only, no migration (the owner ran them; a database that lacks one is refused), nothing cached, since the
   * owner keeps writing.
   */
  readOnly?: boolean;
  /**
   * Where the dashboard's reads (`roster`, `studyDays`) run. `worker` (the default for a database file): on a worker
   * thread with its own read-only connection (dashboard-reader.ts), so they never hold the event loop. `in-process`:
   * on this connection (always for `':memory:'`, which another connection cannot open).
   */
  dashboardReads?: 'worker' | 'in-process';
  /** TEST ONLY (`PROMPTPIPE_TEST_DASHBOARD_READ_GATE`): the worker's reads wait while this file exists. */
  dashboardReadGate?: string;
}

export type SqliteSynchronous = 'group' | 'full' | 'normal';

/**
 * How many WAL pages (4 kB each) a commit lets accumulate before it checkpoints them into the database file; SQLite's
 * default is 1,000. A checkpoint runs inside the commit that crosses the mark, on the event loop, and costs two fsyncs
 * (the WAL before, the database file after) whatever its size, while a busy server rewrites the same hot pages (job
 * and index pages) over and over. Measured on a 2,000-prompt burst: at 1,000 pages, 182 checkpointing commits blocked
 * the server for 1.46 s in all; at 10,000, 22 blocked it for 0.90 s. The WAL file then grows to about 40 MB.
 */
export const WAL_AUTOCHECKPOINT_PAGES = 10_000;
/**
 * SQLite's own page cache, per connection (better-sqlite3's build defaults to 16 MB). Every page also sits in the
 * operating system's file cache, so a miss costs one `pread` of memory, not a disk read: measured during a burst of
 * 2,000 prompts with a 17 MB database, 4 MB left ≈ 1.5 reads per prompt and lowered the server's peak RSS by ≈ 5–15 MB.
 */
const PAGE_CACHE_KIB = 4_000;

export const DEFAULT_SQLITE_SYNCHRONOUS: SqliteSynchronous = 'group';

/**
 * Opens (creating if needed) and migrates a SQLite database.
 *
 * Kysely drives better-sqlite3 through one connection behind a mutex: while `store.transaction(fn)` runs, a call on
 * `store` inside `fn` joins the transaction (the ambient unit of work, unit-of-work.ts); a query that would take the
 * connection from inside it throws instead of waiting for itself.
 * The hot statements (kysely/sql/) skip Kysely's executor and run their cached statement at once, inside their
 * caller's transaction or outside any; one that finds another caller's transaction open goes through Kysely and
 * waits for it, so it never runs inside a transaction that is not its caller's.
 */
export async function createSqliteStore(options: SqliteStoreOptions): Promise<Store> {
  if (options.readOnly) return createReadOnlySqliteStore(options);
  const database = new SqliteDatabase(options.filename);
  try {
    // WAL lets readers (a dashboard, a backup) proceed while the server writes; in-memory databases have no journal.
    if (options.filename !== ':memory:') {
      database.pragma('journal_mode = WAL');
      database.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    }
    database.pragma('foreign_keys = ON');
    database.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
    const synchronous = options.synchronous ?? DEFAULT_SQLITE_SYNCHRONOUS;
    database.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    database.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    const groupCommit =
      synchronous === 'group' && options.filename !== ':memory:'
        ? createGroupCommit({ filename: options.filename })
        : undefined;
    const statements = withStatementCache(database, groupCommit ? { observer: groupCommit.afterStatement } : {});
    const unitOfWork = createUnitOfWorkScope();
    const db = new Kysely<Database>({
      dialect: unitOfWork.guard(new UnaryPlusParameterSqliteDialect({ database: statements })),
    });
    runHotStatementsDirectly(db, (sqlText, parameters, inTransaction) => {
      // Another caller's transaction is open (it holds Kysely's connection mutex), or a stream is (better-sqlite3
      // runs no write until it ends): wait for them through Kysely.
      if ((!inTransaction && database.inTransaction) || statements.streaming()) return undefined;
      const statement = statements.prepare(sqlText);
      if (statement.reader) return { rows: statement.all(parameters) };
      // What Kysely's SQLite driver returns for a statement that returns no rows.
      const { changes, lastInsertRowid } = statement.run(parameters);
      return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
    });
    try {
      await migrateToLatest(db as Kysely<unknown>, sqliteDialect.schema);
    } catch (error) {
      await db.destroy();
      throw error;
    }
    // One process owns a SQLite database, so its flow states, participants and the entries after each participant's
    // latest message can be cached (flow-state-cache.ts, participant-cache.ts, recent-transcript-cache.ts).
    const store = createKyselyStore({
      db,
      dialect: sqliteDialect,
      ...(groupCommit ? { durable: groupCommit.durable, beforeClose: groupCommit.close } : {}),
    });
    return unitOfWork.route(
      withDashboardReader(withParticipantCache(withFlowStateCache(withRecentTranscriptCache(store))), options),
    );
  } catch (error) {
    if (database.open) database.close();
    throw error;
  }
}

async function createReadOnlySqliteStore(options: SqliteStoreOptions): Promise<Store> {
  const database = new SqliteDatabase(options.filename, { readonly: true, fileMustExist: true });
  try {
    database.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    const unitOfWork = createUnitOfWorkScope();
    const db = new Kysely<Database>({ dialect: unitOfWork.guard(new UnaryPlusParameterSqliteDialect({ database })) });
    const pending = await pendingMigrations(db as Kysely<unknown>, sqliteDialect.schema);
    if (pending.length > 0) {
      await db.destroy();
      throw new AppError(
        'conflict',
        `the database ${options.filename} lacks migrations this version has (${pending.join(', ')}): the process ` +
          'that owns it runs another version of PromptPipe',
      );
    }
    return unitOfWork.route(createKyselyStore({ db, dialect: sqliteDialect }));
  } catch (error) {
    if (database.open) database.close();
    throw error;
  }
}

/** The store with its dashboard reads on a worker thread (see `SqliteStoreOptions.dashboardReads`). */
function withDashboardReader(store: Store, options: SqliteStoreOptions): Store {
  if (options.filename === ':memory:' || options.dashboardReads === 'in-process') return store;
  const reader = createDashboardReader({ filename: options.filename, readGate: options.dashboardReadGate });
  const close = store.close;
  return Object.assign(store, {
    roster: reader.roster,
    studyDays: reader.studyDays,
    async close() {
      try {
        await reader.close();
      } finally {
        await close();
      }
    },
  });
}
