/**
 * Prepared queries (prepared-query.ts) are built and compiled once per database and then run with each call's values.
 * These tests run one on SQLite and, when PROMPTPIPE_TEST_PG_URL is set, on PostgreSQL: the values must land where
 * the query put them, constants must stay, transactions must share the database's compiled query, and a call with
 * other parameters must be refused without running anything.
 */
import { randomBytes } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { type Generated, Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import type { Database } from '../../src/store/kysely/database.ts';
import { firstRow, preparedByLimit, preparedQuery } from '../../src/store/kysely/prepared-query.ts';

interface Tables {
  notes: { id: Generated<number>; author: string; text: string; kind: string };
}

const url = process.env['PROMPTPIPE_TEST_PG_URL'];
if (!url) console.warn('PostgreSQL cases of prepared-query.test.ts skipped: PROMPTPIPE_TEST_PG_URL is not set');

const runId = randomBytes(4).toString('hex');
/** Every database opened, with the PostgreSQL schema it created (dropped when the file ends). */
const databases: { db: Kysely<Tables>; schema?: string }[] = [];

afterAll(async () => {
  for (const { db, schema } of databases) {
    if (schema !== undefined) await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
    await db.destroy();
  }
});

async function openSqlite(): Promise<Kysely<Tables>> {
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }) });
  databases.push({ db });
  await sql`create table notes (id integer primary key autoincrement, author text not null, text text not null, kind text not null)`.execute(
    db,
  );
  return db;
}

async function openPostgres(): Promise<Kysely<Tables>> {
  const schema = `promptpipe_test_prepared_${runId}_${databases.length + 1}`;
  const pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schema}` });
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  databases.push({ db, schema });
  await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  await sql`create table notes (id serial primary key, author text not null, text text not null, kind text not null)`.execute(
    db,
  );
  return db;
}

const dialects = [
  { name: 'SQLite', open: openSqlite, skip: false },
  { name: 'PostgreSQL', open: openPostgres, skip: !url },
];

describe.each(dialects)('prepared queries on $name', ({ open, skip }) => {
  it.skipIf(skip)('binds each call’s values where the placeholders were and keeps the constants', async () => {
    const db = await open();
    let builds = 0;
    // `kind` is a constant of the query, bound as a parameter by Kysely: it must stay what the build said.
    const insert = preparedQuery((database: Kysely<Tables>, row: { author: string; text: string }) => {
      builds += 1;
      return database
        .insertInto('notes')
        .values({ author: row.author, text: row.text, kind: 'note' })
        .returning(['id', 'author', 'text', 'kind']);
    });
    const byAuthor = preparedQuery((database: Kysely<Tables>, params: { author: string }) =>
      database.selectFrom('notes').select(['author', 'text', 'kind']).where('author', '=', params.author).orderBy('id'),
    );

    const first = firstRow((await insert.execute(db, { author: 'ana', text: 'first' })).rows);
    const second = firstRow((await insert.execute(db, { text: 'second', author: 'ben' })).rows);
    await insert.execute(db, { author: 'ana', text: 'third' });

    expect(first).toMatchObject({ author: 'ana', text: 'first', kind: 'note' });
    expect(second).toMatchObject({ author: 'ben', text: 'second', kind: 'note' });
    expect(Number(second.id)).toBeGreaterThan(Number(first.id));
    expect((await byAuthor.execute(db, { author: 'ana' })).rows).toEqual([
      { author: 'ana', text: 'first', kind: 'note' },
      { author: 'ana', text: 'third', kind: 'note' },
    ]);
    expect((await byAuthor.execute(db, { author: 'nobody' })).rows).toEqual([]);
    expect(builds).toBe(1);
  });

  it.skipIf(skip)('runs in a transaction with the database’s compiled query, and rolls back with it', async () => {
    const db = await open();
    let builds = 0;
    const insert = preparedQuery((database: Kysely<Tables>, row: { author: string; text: string }) => {
      builds += 1;
      return database.insertInto('notes').values({ ...row, kind: 'note' });
    });
    const count = async () =>
      Number(
        (
          await db
            .selectFrom('notes')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    await insert.execute(db, { author: 'ana', text: 'outside' });
    await db.transaction().execute((transaction) => insert.execute(transaction, { author: 'ana', text: 'inside' }));
    await expect(
      db.transaction().execute(async (transaction) => {
        await insert.execute(transaction, { author: 'ana', text: 'rolled back' });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');

    expect(await count()).toBe(2);
    expect(builds).toBe(1);
  });

  it.skipIf(skip)('refuses a call with other parameters than the first, and runs nothing', async () => {
    const db = await open();
    const insert = preparedQuery((database: Kysely<Tables>, row: { author: string; text: string }) =>
      database.insertInto('notes').values({ ...row, kind: 'note' }),
    );
    await insert.execute(db, { author: 'ana', text: 'kept' });

    const extra = { author: 'ben', text: 'dropped', kind: 'other' } as { author: string; text: string };
    await expect(insert.execute(db, extra)).rejects.toThrow(AppError);
    await expect(insert.execute(db, { author: 'ben' } as { author: string; text: string })).rejects.toThrow(
      /built with \[author, text\]/,
    );
    const renamed = { author: 'ben', body: 'dropped' } as unknown as { author: string; text: string };
    await expect(insert.execute(db, renamed)).rejects.toThrow(AppError);

    expect(await db.selectFrom('notes').select('text').execute()).toEqual([{ text: 'kept' }]);
  });
});

describe('prepared queries across databases', () => {
  it('compile once for each database they run on', async () => {
    const [one, two] = [await openSqlite(), await openSqlite()];
    const builds: Kysely<Tables>[] = [];
    const insert = preparedQuery((database: Kysely<Tables>, row: { author: string }) => {
      builds.push(database);
      return database.insertInto('notes').values({ author: row.author, text: '', kind: 'note' });
    });
    await insert.execute(one, { author: 'ana' });
    await insert.execute(two, { author: 'ben' });
    await insert.execute(one, { author: 'cy' });

    expect(builds).toEqual([one, two]);
    expect(await one.selectFrom('notes').select('author').orderBy('id').execute()).toEqual([
      { author: 'ana' },
      { author: 'cy' },
    ]);
    expect(await two.selectFrom('notes').select('author').execute()).toEqual([{ author: 'ben' }]);
  });

  it('by limit: each limit gets its own literal LIMIT, and an invalid one is refused', async () => {
    const sqlite = new BetterSqlite3(':memory:');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    await sql`create table events (id integer primary key, type text not null)`.execute(db);
    for (let id = 1; id <= 40; id += 1) await sql`insert into events (id, type) values (${id}, 'x')`.execute(db);
    const compiled: string[] = [];
    const newest = preparedByLimit((database, params: { type: string }, limit) => {
      const query = database.selectFrom('events').select('id').where('type', '=', params.type).orderBy('id', 'desc');
      compiled.push(query.limit(limit).compile().sql);
      return query.limit(limit);
    });
    const ids = async (limit: number) =>
      (await newest(limit).execute(db, { type: 'x' })).rows.map((row) => Number(row.id));

    expect(await ids(3)).toEqual([40, 39, 38]);
    expect(await ids(1)).toEqual([40]);
    expect(await ids(3)).toEqual([40, 39, 38]);
    expect(compiled).toEqual([
      'select "id" from "events" where "type" = ? order by "id" desc limit 3',
      'select "id" from "events" where "type" = ? order by "id" desc limit 1',
    ]);
    // More limits than are kept: every one still answers with its own limit.
    for (let limit = 1; limit <= 40; limit += 1) expect(await ids(limit)).toHaveLength(limit);
    expect(() => newest(-1)).toThrow(AppError);
    expect(() => newest(2.5)).toThrow(/non-negative integer/);
    await db.destroy();
  });

  it('firstRow refuses an empty result', () => {
    expect(firstRow([{ id: 1 }])).toEqual({ id: 1 });
    expect(() => firstRow([])).toThrow(AppError);
  });
});
