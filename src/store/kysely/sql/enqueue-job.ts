/**
 * Enqueueing a job: cancel the pending job with the same dedup key, check whether an earlier job of the kind holds it
 * back (for a job handed straight to its runner), insert it. On PostgreSQL the insert also tells the other instances
 * (`pg_notify`, delivered at commit) in the same statement, when the job is pending.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database, JobsTable } from '../database.ts';
import { hotStatement, runHot } from './hot-statement.ts';

/** The one LISTEN/NOTIFY channel of PromptPipe; the payload is `<schema>:<topic>` (see postgres-coordinator.ts). */
export const NOTIFY_CHANNEL = 'promptpipe';

export const cancelPendingByKey = hotStatement(
  'job_cancel_pending_by_key',
  `update jobs set status = 'cancelled', updated_at = $2 where dedup_key = $1 and status = 'pending'`,
);

/**
 * Whether a job of this kind and participant is due or running under a valid lease, and so holds later ones back.
 * The participant and kind are repeated in each branch of the OR, so that SQLite looks each branch up in the
 * `(participant_id, status, kind, …)` index instead of reading all of a participant's jobs.
 */
export const earlierActiveJob = hotStatement(
  'job_earlier_active',
  `select id from jobs
   where (status = 'pending' and run_at <= $3 and participant_id = $1 and kind = $2)
      or (status = 'running' and lease_until >= $3 and participant_id = $1 and kind = $2)
   limit 1`,
);

const JOB_COLUMNS = `id, kind, participant_id, run_at, payload, status, attempts, max_attempts, last_error,
  lease_owner, lease_until, dedup_key, created_at, updated_at`;

export const insertJob = hotStatement(
  'job_insert',
  `with inserted as (
     insert into jobs (${JOB_COLUMNS})
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
     returning *
   )
   select inserted.*,
     (select pg_notify('${NOTIFY_CHANNEL}', current_schema() || ':jobs') where inserted.status = 'pending') is not null
       as announced
   from inserted`,
  // SQLite numbers the job inside the insert, which holds the write lock, so two inserts never read the same maximum.
  // The rowid's maximum (the table B-tree's last entry, no index needed) rather than the column's: the new row gets
  // that same rowid, and every order ever assigned is at most its row's rowid (`arrival_order` began as the rowid in
  // migration 005; both were otherwise the column's maximum plus one; neither table ever loses a row), so the new
  // order is above every other. Migration 017 dropped the indexes that only served `max(order)`.
  `insert into jobs (${JOB_COLUMNS}, enqueue_order)
   values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
     (select coalesce(max(rowid), 0) + 1 from jobs))
   returning *`,
);

export type JobRow = Selectable<JobsTable>;
export type NewJobRow = Omit<JobRow, 'enqueue_order' | 'wake_on'>;

export async function cancelPendingJobByKey(db: Kysely<Database>, dedupKey: string, now: string): Promise<number> {
  const result = await runHot(db, cancelPendingByKey, [dedupKey, now]);
  return Number(result.numAffectedRows ?? 0);
}

export async function hasEarlierActiveJob(
  db: Kysely<Database>,
  participantId: string,
  kind: string,
  now: string,
): Promise<boolean> {
  const { rows } = await runHot(db, earlierActiveJob, [participantId, kind, now]);
  return rows.length > 0;
}

/** Inserts the job and returns its row; on PostgreSQL a pending one is announced to the other instances. */
export async function insertJobRow(db: Kysely<Database>, row: NewJobRow): Promise<JobRow> {
  const { rows } = await runHot<JobRow>(db, insertJob, [
    row.id,
    row.kind,
    row.participant_id,
    row.run_at,
    row.payload,
    row.status,
    row.attempts,
    row.max_attempts,
    row.last_error,
    row.lease_owner,
    row.lease_until,
    row.dedup_key,
    row.created_at,
    row.updated_at,
  ]);
  const [inserted] = rows;
  if (inserted === undefined) throw new Error('the job insert returned no row');
  return inserted;
}
