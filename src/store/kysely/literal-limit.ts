/**
 * A LIMIT or OFFSET written into the SQL text instead of bound as a parameter. Given a bound LIMIT, SQLite plans for
 * its value and so re-prepares the statement on every run (the statement cache then saves nothing): the job claim's
 * candidate query was many times slower with `limit ?` than with `limit 10` (docs/benchmarks.md). (A Kysely plugin
 * doing this for every query cost more than it saved: it rebuilds each query's whole operation tree.)
 */
import { sql } from 'kysely';
import { AppError } from '../../domain/errors.ts';

export function literalLimit(value: number) {
  // Inlined, so it must be what it claims to be (callers pass validated numbers; this makes sure).
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new AppError('invalid_input', `a row limit must be a non-negative integer, not ${String(value)}`);
  }
  return sql.lit(value);
}
