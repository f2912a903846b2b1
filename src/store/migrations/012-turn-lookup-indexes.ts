import type { Kysely } from 'kysely';

/**
 * Two look-ups every turn makes, as indexes:
 * - `transcript (participant_id, source_message_id)`: before answering a message the inbound service and the engine
 *   check whether an earlier, interrupted attempt already recorded or answered it. That was a scan of the
 *   participant's last 200 transcript entries (decoded, tool calls parsed) three times a turn; it is now one indexed
 *   look-up of the entries linked to that message.
 * - `inbound_messages (arrival_order)`: on SQLite the next arrival order is `max(arrival_order) + 1`, which without an
 *   index read the whole table on every inbound message (the jobs table got the same index in 010).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('transcript_source_message_index')
    .on('transcript')
    .columns(['participant_id', 'source_message_id'])
    .execute();
  await db.schema
    .createIndex('inbound_messages_arrival_order_index')
    .on('inbound_messages')
    .column('arrival_order')
    .execute();
}
