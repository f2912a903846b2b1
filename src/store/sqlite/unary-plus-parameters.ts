/**
 * Kysely's SQLite dialect with every bound value written `+?` instead of `?`.
 *
 * SQLite's planner, deciding whether a partial index can serve a query (jobs, inbound messages and the transcript have
 * some), compares the query's terms with the index's `WHERE`. When it meets a bare parameter on the way it reads the
 * value bound to it, and marks the statement to be compiled again whenever that parameter is bound anew; better-sqlite3
 * binds on every run. So "the participant's oldest received message" (`participant_id = ?`, `order by arrival_order`)
 * was parsed and planned again on every run, several times what it costs once planned (`perf` put most of that
 * statement's time in `sqlite3Reprepare`; figures in docs/benchmarks.md).
 *
 * `+?` is SQLite's no-op unary plus: the same value, no affinity (a parameter has none either), a constant expression
 * that indexes serve as before (same plans, checked with `EXPLAIN QUERY PLAN`), but not a bare parameter, so the
 * planner never reads its value. What it gives up: choosing a partial index from a bound value. The queries that need
 * a partial index compare its column with a literal (`literal()` in job-repository.ts, `sql.lit` elsewhere), as they
 * already did for this very reason.
 */
import { type QueryCompiler, SqliteDialect, SqliteQueryCompiler } from 'kysely';

class UnaryPlusParameterCompiler extends SqliteQueryCompiler {
  protected override getCurrentParameterPlaceholder(): string {
    return '+?';
  }
}

export class UnaryPlusParameterSqliteDialect extends SqliteDialect {
  override createQueryCompiler(): QueryCompiler {
    return new UnaryPlusParameterCompiler();
  }
}
