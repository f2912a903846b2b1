import { type Kysely, sql } from 'kysely';
import { atomically } from './atomically.ts';

/**
 * Index entries every turn wrote for nothing (each also a page of the write-ahead log at its commit):
 * - `deliveries (channel, provider_message_id)` held an entry for every delivery record, but only records with a
 *   provider's message id are ever looked up by it (receipts from WhatsApp and Twilio); the webhook, console and web
 *   chat channels have none. It now covers only records that have one. A look-up by `provider_message_id = …` implies
 *   it is not null, so both SQLite and PostgreSQL still use it.
 * - `inbound_messages (received_at, arrival_order) where status = 'received'` served one query: the whole backlog in
 *   arrival order, read only when a model outage outlasts its retry limit. Every message entered it on arrival and
 *   left it when processed: two index pages a turn. That query now reads the same messages from the per-participant
 *   backlog index (`(participant_id, arrival_order) where status = 'received'`, which every turn needs anyway) and
 *   sorts them; a backlog is small.
 * - `jobs (enqueue_order)` and `inbound_messages (arrival_order)` only let SQLite find the largest order for the next
 *   row; it now takes the largest rowid instead (see store/kysely/sql/enqueue-job.ts), and PostgreSQL numbers them itself. No query
 *   orders by either alone: claims and the order checks have their own composite indexes.
 */
export function up(db: Kysely<unknown>): Promise<void> {
  return atomically(db, dropAndCreate);
}

async function dropAndCreate(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('deliveries_provider_message_index').execute();
  await db.schema
    .createIndex('deliveries_provider_message_index')
    .on('deliveries')
    .columns(['channel', 'provider_message_id'])
    .where(sql.ref('provider_message_id'), 'is not', null)
    .execute();
  await db.schema.dropIndex('inbound_messages_received_index').execute();
  await db.schema.dropIndex('jobs_enqueue_order_index').execute();
  await db.schema.dropIndex('inbound_messages_arrival_order_index').execute();
}
