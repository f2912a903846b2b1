import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { createSqliteStore } from '/work/wt/hotsql/src/store/sqlite/sqlite-store.ts';
import { createPostgresStore } from '/work/wt/hotsql/src/store/postgres/postgres-store.ts';
import { allHotStatements, sqliteTextFor } from '/work/wt/hotsql/src/store/kysely/sql/hot-statement.ts';
const file = `/tmp/hs/eqp-${process.pid}.db`;
const store = await createSqliteStore({ filename: file, dashboardReads: 'in-process' });
await store.close();
const db = new BetterSqlite3(file);
for (const s of allHotStatements()) {
  if (!s.sqlite) continue;
  const values = Array.from({ length: 20 }, () => 10);
  const text = sqliteTextFor(s.sqlite, values);
  const st = db.prepare(`explain query plan ${text}`); const plan = st.all(...s.sqlite.order.map(() => null)).map((r: any) => r.detail);
  console.log('SQLITE', s.name, JSON.stringify(plan));
}
const url = 'postgres://postgres@127.0.0.1:5432/test';
const schema = 'hs_eqp_' + process.pid;
const pgs = await createPostgresStore({ connectionString: url, schema });
await pgs.close();
const c = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
await c.connect();
await c.query('set plan_cache_mode = force_generic_plan; set enable_seqscan = off');
for (const s of allHotStatements()) {
  if (!s.postgres) continue;
  const n = Math.max(0, ...[...s.postgres.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  await c.query(`prepare p as ${s.postgres}`);
  const r = await c.query(`explain execute p${n ? '(' + Array(n).fill('null').join(',') + ')' : ''}`);
  console.log('PG', s.name, JSON.stringify(r.rows.map((x: any) => x['QUERY PLAN'].trim())));
  await c.query('deallocate p');
}
await c.query(`drop schema ${schema} cascade`);
await c.end();
