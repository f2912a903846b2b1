import type { Kysely } from 'kysely';

/**
 * The claim's order as an index: due jobs are claimed by `(run_at, enqueue_order)` among `status = 'pending'`. With
 * `(status, run_at)` alone, jobs due at the same instant (a whole study's 9 a.m. prompts and their deliveries) had
 * to be sorted on every claim, after the per-participant ordering check ran on every one of them: each claim cost
 * grew with the backlog, and a burst of N prompts cost O(N²). Walking this index, a claim stops after its batch.
 * It replaces `(status, run_at)`, which is its prefix.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('jobs_status_run_at_order_index')
    .on('jobs')
    .columns(['status', 'run_at', 'enqueue_order'])
    .execute();
  await db.schema.dropIndex('jobs_status_run_at_index').execute();
}
