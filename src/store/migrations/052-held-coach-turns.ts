import type { Kysely } from 'kysely';

/**
 * The coach's turn held while a participant is under staff review (`SAFETY_COACH_TURN=hold`): the flagged inbound
 * message whose turn waits, on the review's own row, so the turn outlives a restart and is released (or discarded)
 * in the transaction that ends the review.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('safety_reviews').addColumn('held_message_id', 'text').execute();
}
