import type { Kysely } from 'kysely';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * The `whatsapp-web` channel's durable state.
 *
 * - `whatsapp_auth`: the linked device's credentials and Signal keys, one row per (session, category, key id), in
 *   Baileys' JSON encoding. Baileys rewrites keys on almost every message, so rows are small and upserted one by one
 *   instead of one big document.
 * - `whatsapp_messages`: every message the channel sent, by WhatsApp message id: receipts map back to the outbound
 *   id through it, and a poll's question, options and message secret are what decrypting a vote needs.
 */
export async function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  const { timestampType, jsonType } = dialect;
  await db.schema
    .createTable('whatsapp_auth')
    .addColumn('session', 'text', (column) => column.notNull())
    .addColumn('category', 'text', (column) => column.notNull())
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('value', 'text', (column) => column.notNull())
    .addColumn('updated_at', timestampType, (column) => column.notNull())
    .addPrimaryKeyConstraint('whatsapp_auth_primary_key', ['session', 'category', 'key_id'])
    .execute();

  await db.schema
    .createTable('whatsapp_messages')
    .addColumn('provider_message_id', 'text', (column) => column.primaryKey())
    .addColumn('session', 'text', (column) => column.notNull())
    .addColumn('outbound_id', 'text', (column) => column.notNull())
    .addColumn('participant_id', 'text', (column) => column.notNull())
    .addColumn('remote_jid', 'text', (column) => column.notNull())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('poll', jsonType)
    .addColumn('created_at', timestampType, (column) => column.notNull())
    .execute();
  await db.schema
    .createIndex('whatsapp_messages_outbound_id_index')
    .on('whatsapp_messages')
    .column('outbound_id')
    .execute();
}
