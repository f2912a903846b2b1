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
 * queries. This hands Kysely the same prepared statement for the same SQL text (least recently used ones are dropped
 * past `capacity`). A statement that is still being iterated (a streamed select) is busy and cannot be re-run, so a
 * busy one gets a fresh, uncached statement instead. With an `observer`, every statement reports its run (group
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
  const statements = new Map<string, { raw: BetterSqlite3.Statement; wrapped: SqliteStatement }>();
  return {
    close: () => {
      statements.clear();
      database.close();
    },
    prepare(sqlText: string): SqliteStatement {
      const cached = statements.get(sqlText);
      if (cached !== undefined) {
        if (cached.raw.busy) return wrap(database.prepare(sqlText));
        // Re-inserting keeps the Map in least-recently-used order.
        statements.delete(sqlText);
        statements.set(sqlText, cached);
        return cached.wrapped;
      }
      const raw = database.prepare(sqlText);
      const entry = { raw, wrapped: wrap(raw) };
      statements.set(sqlText, entry);
      if (statements.size > capacity) {
        const oldest = statements.keys().next().value;
        if (oldest !== undefined) statements.delete(oldest);
      }
      return entry.wrapped;
    },
  };
}
