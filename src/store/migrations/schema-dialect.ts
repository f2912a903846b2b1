import type { ColumnDataType, CreateTableBuilder, Kysely } from 'kysely';

/**
 * The few column definitions the schema builder cannot express portably. Migrations are written once and ask this
 * for the dialect-specific pieces, so a schema change is made in one place for both databases.
 */
export interface SchemaDialect {
  /** For the few statements written out per database (an expression index, a backfill's JSON and date functions). */
  readonly name: 'sqlite' | 'postgres';
  /** `text` (ISO-8601 UTC, sortable) on SQLite, `timestamptz` on PostgreSQL. */
  readonly timestampType: ColumnDataType;
  /** `text` on SQLite, `jsonb` on PostgreSQL. */
  readonly jsonType: ColumnDataType;
  /** An integer primary key the database numbers in insertion order. */
  addIdentityPrimaryKey<T extends string>(table: CreateTableBuilder<T>, column: string): CreateTableBuilder<T>;
  /**
   * A non-key integer column numbered in insertion order: an identity column on PostgreSQL; on SQLite, where only the
   * primary key can autoincrement, a plain column the insert fills (see the job insert in store/kysely/sql/enqueue-job.ts).
   */
  addInsertionOrderColumn<T extends string>(table: CreateTableBuilder<T>, column: string): CreateTableBuilder<T>;
  /**
   * Stores the table's rows in its primary key's order where the database can (SQLite: `WITHOUT ROWID`, so a table
   * keyed by `(participant, number)` keeps each participant's rows together and needs no second index).
   */
  clusterByPrimaryKey<T extends string>(table: CreateTableBuilder<T>): CreateTableBuilder<T>;
  /** The same column added to an existing table (existing rows numbered in their stored order). */
  addInsertionOrderColumnTo(db: Kysely<unknown>, table: string, column: string): Promise<void>;
}
