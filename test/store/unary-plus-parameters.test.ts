import SqliteDatabase from 'better-sqlite3';
import { type Dialect, Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { UnaryPlusParameterSqliteDialect } from '../../src/store/sqlite/unary-plus-parameters.ts';

interface Tables {
  things: { id: number; label: string; count: number; note: string | null; bytes: Buffer | null };
}

const opened: Kysely<Tables>[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) await db.destroy();
});

async function database(
  dialect: Dialect = new UnaryPlusParameterSqliteDialect({ database: new SqliteDatabase(':memory:') }),
): Promise<Kysely<Tables>> {
  const db = new Kysely<Tables>({ dialect });
  opened.push(db);
  await sql`create table things (id integer primary key, label text not null, count integer not null, note text, bytes blob)`.execute(
    db,
  );
  await sql`create index things_label_index on things (label, id) where count > 0`.execute(db);
  await db
    .insertInto('things')
    .values([
      { id: 1, label: '1', count: 10, note: null, bytes: Buffer.from([1, 2]) },
      { id: 2, label: 'b', count: 20, note: 'x', bytes: null },
      { id: 3, label: 'b', count: 0, note: 'y', bytes: null },
    ])
    .execute();
  return db;
}

describe('SQLite parameters written as +? (unary-plus-parameters.ts)', () => {
  it('writes every bound value as +?', async () => {
    const db = await database();
    const compiled = db
      .selectFrom('things')
      .selectAll()
      .where('label', '=', 'b')
      .where('id', 'in', [1, 2])
      .limit(5)
      .compile();
    expect(compiled.sql).toBe('select * from "things" where "label" = +? and "id" in (+?, +?) limit +?');
    expect(compiled.parameters).toEqual(['b', 1, 2, 5]);
  });

  it('finds, orders, limits and writes exactly what bare parameters do, affinity included', async () => {
    const plus = await database();
    const bare = await database(new SqliteDialect({ database: new SqliteDatabase(':memory:') }));
    const runs = async (db: Kysely<Tables>) => [
      // A text column against a number and an integer column against text: each side's affinity rules apply.
      await db
        .selectFrom('things')
        .select('id')
        .where('label', '=', 1 as never)
        .execute(),
      await db.selectFrom('things').select('id').where('label', '=', '1').execute(),
      await db
        .selectFrom('things')
        .select('id')
        .where('count', '=', '20' as never)
        .execute(),
      await db
        .selectFrom('things')
        .select('id')
        .where('label', '=', 'b')
        .where('count', '>', 0)
        .orderBy('id', 'desc')
        .limit(1)
        .execute(),
      await db
        .selectFrom('things')
        .select('id')
        .where('bytes', '=', Buffer.from([1, 2]))
        .execute(),
      await db.selectFrom('things').select('id').where('id', 'in', [3, 1]).orderBy('id').execute(),
      await db
        .updateTable('things')
        .set({ note: null, bytes: Buffer.from([7]) })
        .where('id', '=', 2)
        .execute()
        .then(() => db.selectFrom('things').selectAll().orderBy('id').execute()),
    ];
    const expected = await runs(bare);
    expect(expected[1]).toEqual([{ id: 1 }]);
    expect(expected[3]).toEqual([{ id: 2 }]);
    expect(await runs(plus)).toEqual(expected);
  });

  it('keeps the plans: an equality on a bound value still searches the index', async () => {
    const db = await database();
    const plan = await sql<{
      detail: string;
    }>`explain query plan select id from things where label = ${'b'} and count > 0 order by id`.execute(db);
    expect(plan.rows.map((row) => row.detail).join(' ')).toContain('USING INDEX things_label_index (label=?)');
  });
});
