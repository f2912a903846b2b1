import type { StoreDialect } from '../kysely/store-dialect.ts';

export const postgresDialect: StoreDialect = {
  name: 'postgres',
  schema: {
    timestampType: 'timestamptz',
    jsonType: 'jsonb',
    addIdentityPrimaryKey: (table, column) =>
      table.addColumn(column, 'integer', (definition) => definition.primaryKey().generatedByDefaultAsIdentity()),
    addInsertionOrderColumn: (table, column) =>
      table.addColumn(column, 'integer', (definition) => definition.notNull().generatedAlwaysAsIdentity()),
  },
  // Several server instances claim from the same table. FOR UPDATE locks the chosen rows until the claim commits;
  // SKIP LOCKED makes a concurrent claimer pass over them and take the next due jobs instead of waiting, and never
  // see them as claimable again once they are committed as running.
  lockClaimCandidates: (query) => query.forUpdate().skipLocked(),
  nextJobEnqueueOrder: () => undefined,
};
