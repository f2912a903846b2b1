import type { Kysely } from 'kysely';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * Channels per participant and delivery receipts.
 * - `participants.channel`: the channel the participant is reached on; empty for participants enrolled before, who
 *   use the default (first enabled) channel.
 * - `deliveries`: an append-only log of what became of each outbound message (sent, delivered, read, failed…), so the
 *   transcript itself stays append-only. The newest row of an outbound id is its current status.
 */
export async function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  await db.schema
    .alterTable('participants')
    .addColumn('channel', 'text', (column) => column.notNull().defaultTo(''))
    .execute();

  await dialect
    .addIdentityPrimaryKey(db.schema.createTable('deliveries'), 'id')
    .addColumn('outbound_id', 'text', (column) => column.notNull())
    .addColumn('participant_id', 'text')
    .addColumn('channel', 'text', (column) => column.notNull())
    .addColumn('provider_message_id', 'text')
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('created_at', dialect.timestampType, (column) => column.notNull())
    .execute();
  await db.schema.createIndex('deliveries_outbound_id_index').on('deliveries').columns(['outbound_id', 'id']).execute();
  await db.schema
    .createIndex('deliveries_provider_message_index')
    .on('deliveries')
    .columns(['channel', 'provider_message_id'])
    .execute();
}
