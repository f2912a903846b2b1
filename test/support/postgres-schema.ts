import pg from 'pg';

/** Drops a test's PostgreSQL schema and everything in it (afterAll of a test that made its own schema). */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await client.end();
  }
}
