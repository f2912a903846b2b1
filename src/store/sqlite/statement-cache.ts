import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** Distinct SQL texts kept prepared; the repositories issue a few dozen, so this is only a guard against growth. */
const DEFAULT_CAPACITY = 500;

/**
 * Kysely's SQLite driver prepares every statement anew on each query; preparing costs more than running most of our
 * queries. This hands Kysely the same prepared statement for the same SQL text (least recently used ones are dropped
 * past `capacity`). A statement that is still being iterated (a streamed select) is busy and cannot be re-run, so a
 * busy one gets a fresh, uncached statement instead.
 */
export function withStatementCache(
  database: BetterSqlite3.Database,
  capacity: number = DEFAULT_CAPACITY,
): SqliteDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => {
      statements.clear();
      database.close();
    },
    prepare(sqlText: string): SqliteStatement {
      const cached = statements.get(sqlText);
      if (cached !== undefined) {
        if (cached.busy) return database.prepare(sqlText);
        // Re-inserting keeps the Map in least-recently-used order.
        statements.delete(sqlText);
        statements.set(sqlText, cached);
        return cached;
      }
      const statement = database.prepare(sqlText);
      statements.set(sqlText, statement);
      if (statements.size > capacity) {
        const oldest = statements.keys().next().value;
        if (oldest !== undefined) statements.delete(oldest);
      }
      return statement;
    },
  };
}
