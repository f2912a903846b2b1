import type { Kysely } from 'kysely';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * Several instances on one PostgreSQL (docs/deployment.md):
 * - `inbound_messages.arrival_order`: one global order of arrival, whichever instance received a message, so the
 *   instance that processes a participant's messages takes them in the order they arrived (the manual clock gives
 *   many messages the same `received_at`);
 * - `study_clock`: the manual clock's time, shared by every instance (`PROMPTPIPE_CLOCK=manual` on PostgreSQL).
 */
export async function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  await dialect.addInsertionOrderColumnTo(db, 'inbound_messages', 'arrival_order');
  await db.schema
    .createIndex('inbound_messages_participant_arrival_index')
    .on('inbound_messages')
    .columns(['participant_id', 'status', 'arrival_order'])
    .execute();

  await db.schema
    .createTable('study_clock')
    .addColumn('name', 'text', (column) => column.primaryKey())
    .addColumn('now', dialect.timestampType, (column) => column.notNull())
    .addColumn('updated_at', dialect.timestampType, (column) => column.notNull())
    .execute();
}
