/**
 * Kysely's PostgreSQL dialect with an introspector limited to the search path's schemas.
 *
 * The migrator asks the introspector whether its own tables exist, and Kysely's introspector answers by listing every
 * column of every table in every schema of the database, calling `has_schema_privilege` and `pg_get_serial_sequence`
 * with each schema's NAME. A schema that anyone drops meanwhile (another deployment sharing the database, a test run)
 * is still in the catalog snapshot but no longer found by name, and the listing fails with "schema … does not exist":
 * a start-up that loses that race does not start. This introspector reads the tables of the search path's schemas
 * from the catalog by oid, with no lookup by name, which is all the migrator needs.
 */
import {
  type DatabaseIntrospector,
  type Kysely,
  PostgresDialect,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely';

function createSchemaScopedIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
  async function getTables(): Promise<TableMetadata[]> {
    const result = await sql<{ schema: string; name: string; kind: string }>`
      select n.nspname as schema, c.relname as name, c.relkind as kind
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p', 'v', 'f') and n.nspname = any (current_schemas(false))
      order by n.nspname, c.relname`.execute(db);
    return result.rows.map((row) => ({
      schema: row.schema,
      name: row.name,
      isView: row.kind === 'v',
      isForeign: row.kind === 'f',
      columns: [],
    }));
  }
  return {
    async getSchemas(): Promise<SchemaMetadata[]> {
      const result = await sql<{ name: string }>`select unnest(current_schemas(false)) as name`.execute(db);
      return result.rows;
    },
    getTables,
  };
}

export class SchemaScopedPostgresDialect extends PostgresDialect {
  // biome-ignore lint/suspicious/noExplicitAny: Kysely's own signature
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return createSchemaScopedIntrospector(db);
  }
}
