/**
 * Starting a store never depends on other schemas of the database: the migrator's look for its own tables reads only
 * the search path's schemas, so a schema dropped meanwhile by someone else (another deployment, a parallel test run)
 * cannot fail the start-up with "schema … does not exist", as Kysely's database-wide introspection did.
 */
import { randomBytes } from 'node:crypto';
import { Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { SchemaScopedPostgresDialect } from '../../src/store/postgres/schema-scoped-dialect.ts';

const url = process.env['PROMPTPIPE_TEST_PG_URL'];
if (!url) console.warn('PostgreSQL tests skipped: PROMPTPIPE_TEST_PG_URL is not set');
const runId = randomBytes(4).toString('hex');
const created: string[] = [];

async function withClient<T>(use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  if (!url || created.length === 0) return;
  await withClient(async (client) => {
    for (const schema of created) await client.query(`drop schema if exists "${schema}" cascade`);
  });
});

describe.skipIf(!url)('the schema-scoped PostgreSQL introspection', () => {
  it('lists the tables of the search path only', async () => {
    const mine = `promptpipe_scoped_${runId}_mine`;
    const other = `promptpipe_scoped_${runId}_other`;
    created.push(mine, other);
    await withClient(async (client) => {
      await client.query(`create schema "${mine}"; create table "${mine}".kept (id int)`);
      await client.query(`create schema "${other}"; create table "${other}".elsewhere (id int)`);
    });
    const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${mine}` });
    const db = new Kysely<unknown>({ dialect: new SchemaScopedPostgresDialect({ pool }) });
    try {
      const tables = await db.introspection.getTables();
      expect(tables.map((table) => `${table.schema}.${table.name}`)).toEqual([`${mine}.kept`]);
    } finally {
      await db.destroy();
    }
  });

  it('starts stores while other schemas are created and dropped all around', { timeout: 120_000 }, async () => {
    let churning = true;
    const churn = withClient(async (client) => {
      for (let round = 0; churning; round += 1) {
        const schema = `promptpipe_scoped_${runId}_churn_${round}`;
        await client.query(`create schema "${schema}"; create table "${schema}".t (id serial primary key)`);
        await client.query(`drop schema "${schema}" cascade`);
      }
    });
    try {
      for (let start = 0; start < 6; start += 1) {
        const schema = `promptpipe_scoped_${runId}_store_${start}`;
        created.push(schema);
        const store = await createPostgresStore({ connectionString: url ?? '', schema });
        await store.close();
      }
    } finally {
      churning = false;
      await churn;
    }
  });
});
