/**
 * The job runner's claim: up to `limit` jobs that are due (pending, run_at reached) or abandoned (running, lease
 * expired), in claim order (run_at, then enqueue order), marked running under the claimer's lease.
 *
 * Candidates are found by two walks, one per status, each down its index in claim order and stopping after `limit`
 * (pending jobs by `(status, run_at, enqueue_order)`, running ones by `(status, lease_until)`): one walk with the OR
 * of both had to collect and sort every due job on each claim (migration 011). `$5`: the kinds to claim (null: all);
 * `$6`: the kinds run in order per participant, of which a job is skipped while an earlier one of its kind and
 * participant is due or running under a valid lease.
 *
 * PostgreSQL: one statement. The candidates are locked `FOR UPDATE SKIP LOCKED`, so a concurrent claimer on another
 * instance passes over them and takes the next due jobs instead of waiting. SQLite (one writer, inside a
 * transaction): the two candidate reads, then the update of the chosen ids.
 * Both re-check the claimable condition in the update (as a CASE: given the OR of two conditions on indexed columns,
 * SQLite walked every due job through the status indexes instead of looking the ids up by primary key).
 */
import type { Kysely } from 'kysely';
import { fromTimestamp } from '../column-codecs.ts';
import type { Database } from '../database.ts';
import type { JobRow } from './enqueue-job.ts';
import { hotStatement, runHot } from './hot-statement.ts';

const HELD_BACK_POSTGRES = `(participant_id is null or not (kind = any($6::text[])) or not exists (
  select earlier.id from jobs as earlier
  where earlier.participant_id = jobs.participant_id and earlier.kind = jobs.kind
    and earlier.enqueue_order < jobs.enqueue_order
    and ((earlier.status = 'pending' and earlier.run_at <= $1) or (earlier.status = 'running' and earlier.lease_until >= $1))))`;

const CLAIMABLE = `case when status = 'pending' then run_at <= $1 when status = 'running' then lease_until < $1 else false end`;

export const claimJobs = hotStatement(
  'jobs_claim',
  `with pending as (
     select id, run_at, enqueue_order from jobs
     where status = 'pending' and run_at <= $1 and ($5::text[] is null or kind = any($5::text[]))
       and ${HELD_BACK_POSTGRES}
     order by run_at, enqueue_order limit $4
     for update skip locked
   ), expired as (
     select id, run_at, enqueue_order from jobs
     where status = 'running' and lease_until < $1 and ($5::text[] is null or kind = any($5::text[]))
       and ${HELD_BACK_POSTGRES}
     order by run_at, enqueue_order limit $4
     for update skip locked
   ), chosen as (
     select id from (select * from pending union all select * from expired) as candidates
     order by run_at, enqueue_order limit $4
   )
   update jobs set status = 'running', lease_owner = $2, lease_until = $3, attempts = attempts + 1, wake_on = null,
     updated_at = $1
   where id in (select id from chosen) and ${CLAIMABLE}
   returning *`,
  null,
);

/** SQLite's candidates of one status; the kinds lists are JSON arrays. */
function sqliteCandidates(status: 'pending' | 'running'): string {
  const due = status === 'pending' ? 'run_at <= $1' : 'lease_until < $1';
  return `select id, run_at, enqueue_order from jobs
    where status = '${status}' and ${due} and ($2 is null or kind in (select value from json_each($2)))
      and (participant_id is null or kind not in (select value from json_each($3)) or not exists (
        select earlier.id from jobs as earlier
        where earlier.participant_id = jobs.participant_id and earlier.kind = jobs.kind
          and earlier.enqueue_order < jobs.enqueue_order
          and ((earlier.status = 'pending' and earlier.run_at <= $1)
            or (earlier.status = 'running' and earlier.lease_until >= $1))))
    order by run_at, enqueue_order limit $4`;
}

export const pendingClaimCandidates = hotStatement('jobs_claim_pending', null, sqliteCandidates('pending'));
export const expiredClaimCandidates = hotStatement('jobs_claim_expired', null, sqliteCandidates('running'));

/** `$4`: the chosen ids, a JSON array. */
export const claimChosenJobs = hotStatement(
  'jobs_claim_chosen',
  null,
  `update jobs set status = 'running', lease_owner = $2, lease_until = $3, attempts = attempts + 1, wake_on = null,
     updated_at = $1
   where id in (select value from json_each($4)) and ${CLAIMABLE}
   returning *`,
);

export interface ClaimOptions {
  now: string;
  owner: string;
  leaseUntil: string;
  limit: number;
  kinds: readonly string[] | undefined;
  orderedKinds: readonly string[];
}

type Candidate = { id: string; run_at: string; enqueue_order: number };

const inClaimOrder = (a: Pick<JobRow, 'run_at' | 'enqueue_order'>, b: Pick<JobRow, 'run_at' | 'enqueue_order'>) =>
  fromTimestamp(a.run_at).getTime() - fromTimestamp(b.run_at).getTime() ||
  Number(a.enqueue_order) - Number(b.enqueue_order);

/** Claims the jobs and returns them in claim order. On SQLite `db` must be a transaction (the caller's). */
export async function claimJobRows(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  options: ClaimOptions,
): Promise<JobRow[]> {
  const { now, owner, leaseUntil, limit, kinds, orderedKinds } = options;
  if (dialect === 'postgres') {
    const values = [now, owner, leaseUntil, limit, kinds ?? null, orderedKinds];
    // RETURNING has no order; the claim order is the rows' own (the claim changes neither run_at nor the order).
    return (await runHot<JobRow>(db, claimJobs, values)).rows.sort(inClaimOrder);
  }
  const filters = [now, kinds === undefined ? null : JSON.stringify(kinds), JSON.stringify(orderedKinds), limit];
  const pending = (await runHot<Candidate>(db, pendingClaimCandidates, filters)).rows;
  const expired = (await runHot<Candidate>(db, expiredClaimCandidates, filters)).rows;
  const ids = [...pending, ...expired]
    .sort(inClaimOrder)
    .slice(0, limit)
    .map((row) => row.id);
  if (ids.length === 0) return [];
  const { rows } = await runHot<JobRow>(db, claimChosenJobs, [now, owner, leaseUntil, JSON.stringify(ids)]);
  const claimed = new Map(rows.map((row) => [row.id, row]));
  return ids.flatMap((id) => claimed.get(id) ?? []);
}
