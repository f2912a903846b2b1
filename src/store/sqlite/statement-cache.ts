import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** Distinct SQL texts kept prepared; the repositories issue a few dozen, so this is only a guard against growth. */
const DEFAULT_CAPACITY = 500;

/** Told after each statement ran (or failed): whether it writes, and whether a transaction is still open. */
export type StatementObserver = (statement: { readonly: boolean }, inTransaction: boolean) => void;

/**
 * What Kysely's SQLite driver calls: the statement, with the observer told after each run, and its streams counted.
 * better-sqlite3's `readonly`, `busy` and `inTransaction` are native getters, a call into C++ each, and every statement
 * of a turn would ask them: `readonly` never changes, so it is read once, and `busy` is asked only while a stream is
 * open.
 */
function cachedStatement(
  statement: BetterSqlite3.Statement,
  database: BetterSqlite3.Database,
  streams: { open: number },
  observer: StatementObserver | undefined,
): SqliteStatement {
  const kind = { readonly: statement.readonly };
  const after = observer ? () => observer(kind, database.inTransaction) : undefined;
  return {
    reader: statement.reader,
    all(parameters) {
      if (!after) return statement.all(parameters);
      try {
        return statement.all(parameters);
      } finally {
        after();
      }
    },
    run(parameters) {
      if (!after) return statement.run(parameters);
      try {
        return statement.run(parameters);
      } finally {
        after();
      }
    },
    // Streamed selects only read, so the observer is not told.
    *iterate(parameters) {
      streams.open += 1;
      try {
        yield* statement.iterate(parameters);
      } finally {
        streams.open -= 1;
      }
    },
  };
}

/** What Kysely's SQLite driver needs, and whether a stream is open (better-sqlite3 refuses writes until it ends). */
export interface CachedStatements extends SqliteDatabase {
  streaming(): boolean;
}

/**
 * Kysely's SQLite driver prepares every statement anew on each query; preparing costs more than running most of our
 * queries. This hands Kysely the same prepared statement for the same SQL text (past `capacity`, one that has not
 * been used for long is dropped, see `evictOne`). A statement that is still being iterated (a streamed select) is
 * busy and cannot be re-run, so a busy one gets a fresh, uncached statement instead. With an `observer`, every
 * statement reports its run (group commit counts commits this way, see group-commit.ts).
 */
export function withStatementCache(
  database: BetterSqlite3.Database,
  options: { capacity?: number; observer?: StatementObserver } = {},
): CachedStatements {
  const capacity = options.capacity ?? DEFAULT_CAPACITY;
  const { observer } = options;
  /** Streams (iterated selects) not yet finished: while there is none, no statement can be busy. */
  const streams = { open: 0 };
  const wrap = (statement: BetterSqlite3.Statement): SqliteStatement =>
    cachedStatement(statement, database, streams, observer);
  /** `used`: run again since it was cached or last spared, so the next eviction passes it over once. */
  const statements = new Map<string, { raw: BetterSqlite3.Statement; wrapped: SqliteStatement; used: boolean }>();
  function evictOne(): void {
    // Second chance: the oldest entry that was not used since it was last passed over goes; a used one moves to the
    // back. Near least-recently-used, and a hit costs one look-up instead of moving its entry in the Map.
    for (const [sqlText, entry] of statements) {
      statements.delete(sqlText);
      if (!entry.used) return;
      entry.used = false;
      statements.set(sqlText, entry);
    }
  }
  return {
    streaming: () => streams.open > 0,
    close: () => {
      statements.clear();
      database.close();
    },
    prepare(sqlText: string): SqliteStatement {
      const cached = statements.get(sqlText);
      if (cached !== undefined) {
        if (streams.open > 0 && cached.raw.busy) return wrap(database.prepare(sqlText));
        cached.used = true;
        return cached.wrapped;
      }
      const raw = database.prepare(sqlText);
      // Room is made before the new statement goes in, so it is never the one passed over last and dropped.
      if (statements.size >= capacity) evictOne();
      const entry = { raw, wrapped: wrap(raw), used: false };
      statements.set(sqlText, entry);
      return entry.wrapped;
    },
  };
}
