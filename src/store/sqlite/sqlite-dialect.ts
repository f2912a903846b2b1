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
  announceJobEnqueued: async () => {},
};
