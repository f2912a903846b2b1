import { type Kysely, sql } from 'kysely';

/**
 * The transcript rows the interrupted-turn checks look for: the participant's message as recorded, and the reply that
 * answered it. Only those are indexed (not tool calls and results), and by message id alone, to keep the index
 * small: it is paid for on every turn's rows. The query must repeat this predicate verbatim for SQLite to use it.
 * Because of this partial index, a transcript query that compares `role` or `kind` with a BOUND parameter would be
 * re-planned by SQLite on every run (see `literal()` in job-repository.ts): write such values into the SQL text.
 */
export const TURN_ANCHOR_ROWS = sql<boolean>`(role = 'user' or kind = 'reply')`;

/**
 * Two look-ups every turn makes, as indexes:
 * - `transcript (source_message_id)`, for the participant's messages and replies only: before answering a message
 *   the inbound service and the engine check whether an earlier, interrupted attempt already recorded or answered it.
 *   That was a scan of the participant's last 200 transcript entries (decoded, tool calls parsed) three times a turn;
 *   it is now one indexed look-up.
 * - `inbound_messages (arrival_order)`: on SQLite the next arrival order is `max(arrival_order) + 1`, which without an
 *   index read the whole table on every inbound message (the jobs table got the same index in 010).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('transcript_source_message_index')
    .on('transcript')
    .column('source_message_id')
    .where(TURN_ANCHOR_ROWS)
    .execute();
  await db.schema
    .createIndex('inbound_messages_arrival_order_index')
    .on('inbound_messages')
    .column('arrival_order')
    .execute();
}
