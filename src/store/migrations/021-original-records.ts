import type { Kysely } from 'kysely';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * The original PromptPipe's records that have no home in PromptPipe's own tables (its API, docs/api.md):
 * - `recorded_responses`: what `POST /response` records (a sender's message told to the API, not received on a
 *   channel) and the `responses` rows imported from an original database. `GET /responses` shows them beside the
 *   inbound messages. The sender need not be a participant, so there is no foreign key.
 * - `imported_receipts`: the `receipts` rows imported from an original database. PromptPipe's own receipts are the
 *   `deliveries` log; these stay as they were.
 * `import_key` names an imported row's origin (`original:responses:<id>`), unique, so importing twice adds nothing.
 */
export async function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  await dialect
    .addIdentityPrimaryKey(db.schema.createTable('recorded_responses'), 'id')
    .addColumn('sender', 'text', (column) => column.notNull())
    .addColumn('body', 'text', (column) => column.notNull())
    .addColumn('participant_id', 'text')
    .addColumn('received_at', dialect.timestampType, (column) => column.notNull())
    .addColumn('import_key', 'text', (column) => column.unique())
    .execute();
  await db.schema
    .createIndex('recorded_responses_received_at_index')
    .on('recorded_responses')
    .column('received_at')
    .execute();

  await dialect
    .addIdentityPrimaryKey(db.schema.createTable('imported_receipts'), 'id')
    .addColumn('recipient', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('sent_at', dialect.timestampType, (column) => column.notNull())
    .addColumn('import_key', 'text', (column) => column.notNull().unique())
    .execute();
}
