import { sql } from 'kysely';
import { NOTIFY_CHANNEL } from '../kysely/sql/enqueue-job.ts';
import type { StoreDialect } from '../kysely/store-dialect.ts';

/** The one LISTEN/NOTIFY channel of PromptPipe; the payload is `<schema>:<topic>` (see postgres-coordinator.ts). */
export { NOTIFY_CHANNEL };

export const postgresDialect: StoreDialect = {
  name: 'postgres',
  schema: {
    name: 'postgres',
    timestampType: 'timestamptz',
    jsonType: 'jsonb',
    addIdentityPrimaryKey: (table, column) =>
      table.addColumn(column, 'integer', (definition) => definition.primaryKey().generatedByDefaultAsIdentity()),
    addInsertionOrderColumn: (table, column) =>
      table.addColumn(column, 'integer', (definition) => definition.notNull().generatedAlwaysAsIdentity()),
    // A heap table with its primary-key index: PostgreSQL has no clustered tables (CLUSTER is a one-off reorder).
    clusterByPrimaryKey: (table) => table,
    addInsertionOrderColumnTo: async (db, table, column) => {
      // Existing rows are numbered too (in their physical order), so the column can be NOT NULL.
      await db.schema
        .alterTable(table)
        .addColumn(column, 'bigint', (definition) => definition.notNull().generatedAlwaysAsIdentity())
        .execute();
    },
  },
  // Delivered at commit, only if the enqueue commits: the other instances' runners wake at once (polling stays as
  // the safety net for a lost notification).
  announceJobEnqueued: async (db) => {
    await sql`select pg_notify(${NOTIFY_CHANNEL}, current_schema() || ':jobs')`.execute(db);
  },
};
