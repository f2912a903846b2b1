import type { Kysely } from 'kysely';

/**
 * Indexes for the job runner's hot queries, added once the queue was measured under load:
 * - `enqueue_order`: every insert computes `max(enqueue_order) + 1` on SQLite; without an index that is a scan of the
 *   whole table, which grows with every delivered message.
 * - `(status, lease_until)`: claiming and the runner's "when is the next job due" also look for running jobs whose
 *   lease has expired.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('jobs_enqueue_order_index').on('jobs').column('enqueue_order').execute();
  await db.schema.createIndex('jobs_status_lease_until_index').on('jobs').columns(['status', 'lease_until']).execute();
}
