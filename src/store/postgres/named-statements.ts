/**
 * The hot statements (kysely/sql/) as named prepared statements. Kysely's PostgreSQL driver sends every query as
 * `client.query(text, values)`: an unnamed statement, parsed and planned by the server again on every run. The pool
 * handed to Kysely here gives each client a `query` that sends a hot statement's text as `{ name, text, values }`:
 * pg parses it once per connection (the server keeps it for the connection's life) and later runs only bind and
 * execute it. Every other query passes through unchanged.
 */
import type pg from 'pg';
import { hotStatementFor } from '../kysely/sql/hot-statement.ts';

const NAMED = Symbol('hot statements named');

type QueryFunction = (...parameters: unknown[]) => unknown;

function nameHotStatements(client: pg.PoolClient): void {
  const marked = client as pg.PoolClient & { [NAMED]?: true };
  if (marked[NAMED]) return;
  marked[NAMED] = true;
  const query = client.query.bind(client) as QueryFunction;
  (client as { query: QueryFunction }).query = (...parameters: unknown[]) => {
    const [text, values] = parameters;
    if (typeof text === 'string') {
      const statement = hotStatementFor(text);
      if (statement !== undefined) return query({ name: statement.name, text, values });
    }
    return query(...parameters);
  };
}

/** What Kysely's PostgreSQL dialect needs of a pool, with the hot statements named on every client it hands out. */
export function namedStatementPool(pool: pg.Pool): {
  connect(): Promise<pg.PoolClient>;
  end(): Promise<void>;
  options: object;
} {
  return {
    options: pool.options,
    async connect() {
      const client = await pool.connect();
      nameHotStatements(client);
      return client;
    },
    end: () => pool.end(),
  };
}
