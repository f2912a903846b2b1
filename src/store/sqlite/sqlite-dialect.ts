import { sql } from 'kysely';
import type { StoreDialect } from '../kysely/store-dialect.ts';

export const sqliteDialect: StoreDialect = {
  name: 'sqlite',
  schema: {
    name: 'sqlite',
    // ISO-8601 text written by `toTimestamp`: fixed width and UTC, so text order is time order.
    timestampType: 'text',
    jsonType: 'text',
    addIdentityPrimaryKey: (table, column) =>
      table.addColumn(column, 'integer', (definition) => definition.primaryKey().autoIncrement()),
    addInsertionOrderColumn: (table, column) =>
      table.addColumn(column, 'integer', (definition) => definition.notNull()),
    clusterByPrimaryKey: (table) => table.modifyEnd(sql`without rowid`),
    addInsertionOrderColumnTo: async (db, table, column) => {
      await db.schema.alterTable(table).addColumn(column, 'integer').execute();
      await sql`update ${sql.table(table)} set ${sql.ref(column)} = rowid`.execute(db);
    },
  },
  // One writer at a time: a claim runs in a transaction holding SQLite's write lock (and Kysely's connection mutex
  // within this process), so nobody else can take the same rows in between.
  lockClaimCandidates: (query) => query,
  // Computed inside the insert, which holds the write lock, so two inserts can never read the same maximum. The
  // rowid's maximum (the table B-tree's last entry, no index needed) rather than the column's: SQLite gives the new row
  // that same rowid, and every order ever assigned is at most its row's rowid (`arrival_order` was added as the rowid
  // in migration 005; both columns were otherwise always the column's maximum plus one, which is at most the largest
  // rowid plus one; neither table ever loses a row), so the new order is still above every other. Migration 017
  // dropped the indexes that only served `max(order)`.
  nextJobEnqueueOrder: () => sql<number>`(select coalesce(max(rowid), 0) + 1 from jobs)`,
  nextInboundArrivalOrder: () => sql<number>`(select coalesce(max(rowid), 0) + 1 from inbound_messages)`,
  announceJobEnqueued: async () => {},
};
