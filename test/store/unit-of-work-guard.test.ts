import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/kysely/database.ts';
import { createKyselyStore } from '../../src/store/kysely/kysely-store.ts';
import { postgresDialect } from '../../src/store/postgres/postgres-dialect.ts';
import { sqliteDialect } from '../../src/store/sqlite/sqlite-dialect.ts';
import type { Store } from '../../src/store/store.ts';
import { createUnitOfWorkScope, OUTER_STORE_IN_UNIT_OF_WORK } from '../../src/store/unit-of-work.ts';

const url = process.env['PROMPTPIPE_TEST_PG_URL'];

/** A store as an adapter builds it, with its layers apart: the raw Kysely and the store below the routing layer. */
function layers(dialect: 'sqlite' | 'postgres', guard = true) {
  const scope = createUnitOfWorkScope({ guard });
  const kyselyDialect =
    dialect === 'sqlite'
      ? new SqliteDialect({ database: new SqliteDatabase(':memory:') })
      : new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) });
  const db = new Kysely<Database>({ dialect: scope.guard(kyselyDialect) });
  const inner: Store = createKyselyStore({ db, dialect: dialect === 'sqlite' ? sqliteDialect : postgresDialect });
  return { db, inner, store: scope.route(inner), scope };
}

function describeGuard(dialect: 'sqlite' | 'postgres') {
  it('throws a clear error, instead of hanging, when the outer database is used inside a unit of work', async () => {
    const { db, inner, store, scope } = layers(dialect);
    try {
      expect(scope.active()).toBe(false);
      await store.transaction(async (tx) => {
        expect(scope.active()).toBe(true);
        await expect(sql`select 1`.execute(db)).rejects.toThrow(OUTER_STORE_IN_UNIT_OF_WORK);
        await expect(inner.ping()).rejects.toThrow(OUTER_STORE_IN_UNIT_OF_WORK);
        // The unit of work's own connection, and the routed store, still answer.
        await tx.ping();
        await store.ping();
      });
      expect(scope.active()).toBe(false);
      // Outside any unit of work, the same calls are fine.
      await expect(sql`select 1`.execute(db)).resolves.toBeDefined();
      await inner.ping();
    } finally {
      await store.close();
    }
  });

  it('leaves other flows, outside the unit of work, alone', async () => {
    const { db, store } = layers(dialect);
    try {
      let opened: () => void = () => undefined;
      const isOpen = new Promise<void>((resolve) => {
        opened = resolve;
      });
      let finish: () => void = () => undefined;
      const finished = new Promise<void>((resolve) => {
        finish = resolve;
      });
      const unit = store.transaction(async () => {
        opened();
        await finished;
      });
      await isOpen;
      // A concurrent request, begun outside the unit of work: it waits for the connection (SQLite) or takes another
      // (PostgreSQL), as before.
      const outside = sql`select 1 as one`.execute(db);
      finish();
      await unit;
      await expect(outside).resolves.toMatchObject({ rows: [{ one: 1 }] });
    } finally {
      await store.close();
    }
  });
}

describe('the unit-of-work guard', () => {
  describe('sqlite', () => describeGuard('sqlite'));
  describe.skipIf(!url)('postgres', () => describeGuard('postgres'));
});
