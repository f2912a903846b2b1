import { type Kysely, sql } from 'kysely';

/**
 * The claim's two index walks over active jobs only. `(status, run_at, enqueue_order)` and `(status, lease_until)`
 * also held an entry for every completed, failed and cancelled job, and every job moved through three regions of
 * each (pending, running, then completed): completing a delivery rewrote one page to drop its running entry and
 * another to add its completed one, in both indexes. Measured on the write-ahead log during a 9 a.m. burst, these two
 * indexes were 29 % of every page the server wrote. As partial indexes on the statuses the claim reads, a job enters
 * the pending index when queued, moves to the running one when claimed, and leaves it when finished; the indexes stay
 * as small as the queue. The queries that use them compare `status` with a literal (`literal()` in
 * job-repository.ts), which both SQLite and PostgreSQL need to choose a partial index.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('jobs_pending_run_at_order_index')
    .on('jobs')
    .columns(['run_at', 'enqueue_order'])
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
  await db.schema
    .createIndex('jobs_running_lease_until_index')
    .on('jobs')
    .column('lease_until')
    .where(sql.ref('status'), '=', sql.lit('running'))
    .execute();
  await db.schema.dropIndex('jobs_status_run_at_order_index').execute();
  await db.schema.dropIndex('jobs_status_lease_until_index').execute();
}
