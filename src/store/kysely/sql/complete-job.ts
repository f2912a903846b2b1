/** A job's end and the runner's look at when the next one is due: once per job, and after every batch. */
import type { Kysely } from 'kysely';
import type { Database } from '../database.ts';
import { hotStatement, runHot } from './hot-statement.ts';

export const completeJob = hotStatement(
  'job_complete',
  `update jobs set status = 'completed', lease_until = null, updated_at = $2 where id = $1 and status = 'running'`,
);

/** The earliest pending run time and the earliest running lease's end, each from its status's partial index. */
export const nextDueJob = hotStatement(
  'job_next_due',
  `select (select min(run_at) from jobs where status = 'pending') as pending_at,
     (select min(lease_until) from jobs where status = 'running') as lease_at`,
);

export async function completeJobRow(db: Kysely<Database>, id: string, now: string): Promise<void> {
  await runHot(db, completeJob, [id, now]);
}

export async function nextDueTimes(
  db: Kysely<Database>,
): Promise<{ pending_at: Date | string | null; lease_at: Date | string | null } | undefined> {
  const { rows } = await runHot<{ pending_at: Date | string | null; lease_at: Date | string | null }>(
    db,
    nextDueJob,
    [],
  );
  return rows[0];
}
