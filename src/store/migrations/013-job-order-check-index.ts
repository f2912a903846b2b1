import type { Kysely } from 'kysely';

/**
 * The per-participant ordering check of the claim ("no earlier job of this kind for this participant is still pending
 * or running") as an index: `(participant_id, status, kind, enqueue_order)` answers it with one short range per
 * candidate. With only `(participant_id, status)` SQLite preferred to walk every due job through the status indexes
 * for each candidate, so a claim cost grew with the backlog: a 9 a.m. burst of N prompts cost O(N²). It replaces
 * `(participant_id, status)`, which is its prefix.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('jobs_participant_status_kind_order_index')
    .on('jobs')
    .columns(['participant_id', 'status', 'kind', 'enqueue_order'])
    .execute();
  await db.schema.dropIndex('jobs_participant_id_index').execute();
}
