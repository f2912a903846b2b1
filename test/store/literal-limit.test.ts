/**
 * Row limits are written into the SQL text (literal-limit.ts): a bound LIMIT made SQLite re-prepare the statement on
 * every run. Being inlined, a limit must be a non-negative integer; anything else is refused before any SQL runs.
 */
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import { literalLimit } from '../../src/store/kysely/literal-limit.ts';

interface Tables {
  notes: { id: number; text: string };
}

describe('row limits as SQL literals', () => {
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }) });

  it('puts the limit and offset in the SQL text and keeps the other values bound', () => {
    const compiled = db
      .selectFrom('notes')
      .selectAll()
      .where('text', '=', 'hello')
      .limit(literalLimit(10))
      .offset(literalLimit(20))
      .compile();
    expect(compiled.sql).toBe('select * from "notes" where "text" = ? limit 10 offset 20');
    expect(compiled.parameters).toEqual(['hello']);
  });

  it.each([-1, 2.5, Number.NaN, Number.POSITIVE_INFINITY, '5; drop table notes' as unknown as number])(
    'refuses %s',
    (value) => {
      expect(() => literalLimit(value)).toThrow(AppError);
      expect(() => literalLimit(value)).toThrow(/non-negative integer/);
    },
  );
});
