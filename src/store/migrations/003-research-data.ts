import type { Kysely } from 'kysely';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * Research data (issue 8): the provenance of every LLM call (`llm_calls`), the link from a transcript entry to the
 * call that produced it (`transcript.llm_call_id`), and broadcasts.
 */
export async function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  const { timestampType, jsonType } = dialect;

  // Like the transcript, an audit record that outlives participants: no foreign key.
  await dialect
    .addIdentityPrimaryKey(db.schema.createTable('llm_calls'), 'id')
    .addColumn('participant_id', 'text')
    .addColumn('purpose', 'text', (column) => column.notNull())
    .addColumn('model', 'text', (column) => column.notNull())
    .addColumn('provider_host', 'text', (column) => column.notNull())
    .addColumn('temperature', 'double precision')
    .addColumn('prompt_file', 'text')
    .addColumn('prompt_version', 'text')
    .addColumn('prompt_tokens', 'integer')
    .addColumn('completion_tokens', 'integer')
    .addColumn('total_tokens', 'integer')
    .addColumn('latency_ms', 'integer', (column) => column.notNull())
    .addColumn('outcome', 'text', (column) => column.notNull())
    .addColumn('error', 'text')
    .addColumn('created_at', timestampType, (column) => column.notNull())
    .execute();
  await db.schema.createIndex('llm_calls_created_at_index').on('llm_calls').columns(['created_at', 'id']).execute();

  await db.schema.alterTable('transcript').addColumn('llm_call_id', 'integer').execute();

  await db.schema
    .createTable('broadcasts')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('text', 'text', (column) => column.notNull())
    .addColumn('filter', jsonType, (column) => column.notNull())
    .addColumn('recipients', 'integer', (column) => column.notNull())
    .addColumn('created_at', timestampType, (column) => column.notNull())
    .execute();
}
