import { type Kysely, sql } from 'kysely';

/**
 * The inbound look-ups that only want messages not yet processed, as indexes of those messages only. The full
 * `(status, received_at)` and `(participant_id, status, arrival_order)` indexes held an entry for every message ever
 * received, and processing one moved its entry from the `received` region to the `processed` region of both: two more
 * index pages written per turn, and the indexes grew with the study. As partial indexes on `status = 'received'`, a
 * message enters them when it arrives and leaves them when it is processed (or fails), so they stay as small as the
 * backlog. The one look-up over every message, the last arrival of a participant on a channel (the WhatsApp Cloud
 * 24-hour window), gets `(participant_id, received_at)`. The queries compare `status` with a literal, which both
 * SQLite and PostgreSQL need to choose a partial index.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const received = [sql.ref('status'), '=', sql.lit('received')] as const;
  await db.schema
    .createIndex('inbound_messages_received_index')
    .on('inbound_messages')
    .columns(['received_at', 'arrival_order'])
    .where(...received)
    .execute();
  await db.schema
    .createIndex('inbound_messages_participant_received_index')
    .on('inbound_messages')
    .columns(['participant_id', 'arrival_order'])
    .where(...received)
    .execute();
  await db.schema
    .createIndex('inbound_messages_participant_received_at_index')
    .on('inbound_messages')
    .columns(['participant_id', 'received_at'])
    .execute();
  await db.schema.dropIndex('inbound_messages_status_index').execute();
  await db.schema.dropIndex('inbound_messages_participant_arrival_index').execute();
}
