import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** Distinct SQL texts kept prepared; the repositories issue a few dozen, so this is only a guard against growth. */
const DEFAULT_CAPACITY = 500;

/** Told after each statement ran (or failed): whether it writes, and whether a transaction is still open. */
export type StatementObserver = (statement: { readonly: boolean }, inTransaction: boolean) => void;

/** What Kysely's SQLite driver calls, with the observer told after each run. */
function observed(
  statement: BetterSqlite3.Statement,
  database: BetterSqlite3.Database,
  observer: StatementObserver,
): SqliteStatement {
  const after = () => observer(statement, database.inTransaction);
  return {
    reader: statement.reader,
    all(parameters) {
      try {
        return statement.all(parameters);
      } finally {
        after();
      }
    },
    run(parameters) {
      try {
        return statement.run(parameters);
      } finally {
        after();
      }
    },
    iterate(parameters) {
      // Streamed selects only read.
      return statement.iterate(parameters);
    },
  };
}

/**
 * Kysely's SQLite driver prepares every statement anew on each query; preparing costs more than running most of our
 * queries. This hands Kysely the same prepared statement for the same SQL text (past `capacity`, one that has not
 * been used for long is dropped, see `evictOne`). A statement that is still being iterated (a streamed select) is
 * busy and cannot be re-run, so a busy one gets a fresh, uncached statement instead. With an `observer`, every statement reports its run (group
 * commit counts commits this way, see group-commit.ts).
 */
export function withStatementCache(
  database: BetterSqlite3.Database,
  options: { capacity?: number; observer?: StatementObserver } = {},
): SqliteDatabase {
  const capacity = options.capacity ?? DEFAULT_CAPACITY;
  const { observer } = options;
  const wrap = (statement: BetterSqlite3.Statement): SqliteStatement =>
    observer ? observed(statement, database, observer) : statement;
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
    close: () => {
      statements.clear();
      database.close();
    },
    prepare(sqlText: string): SqliteStatement {
      const cached = statements.get(sqlText);
      if (cached !== undefined) {
        if (cached.raw.busy) return wrap(database.prepare(sqlText));
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
