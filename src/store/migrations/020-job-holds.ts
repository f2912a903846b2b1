import type { Kysely } from 'kysely';

/**
 * What wakes a held job (`JobRepository.hold`): the name of the channel whose connection it waits for. A delivery
 * held while WhatsApp Web is not linked keeps its one row, and `wakeHeld` finds exactly those when the link is back.
 * Null for every other job, a hold without a wake-up (a rate limit's wait) included; cleared when the job is claimed.
 * A column rather than a status: a held job stays `pending` for everything that reads or cancels pending jobs (a
 * participant withdrawn while their greeting waits has it cancelled like any other).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('wake_on', 'text').execute();
}
