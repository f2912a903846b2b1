import { type Insertable, type Kysely, type RawBuilder, type Selectable, type SqlBool, sql } from 'kysely';
import { type Job, type JobRepository, JobStatus } from '../store.ts';
import { fromJson, fromOptionalTimestamp, fromTimestamp, toJson, toTimestamp } from './column-codecs.ts';
import type { Database, JobsTable } from './database.ts';
import { inTransaction } from './in-transaction.ts';
import { literalLimit } from './literal-limit.ts';
import { firstRow, preparedQuery } from './prepared-query.ts';
import type { StoreDialect } from './store-dialect.ts';

export const DEFAULT_MAX_ATTEMPTS = 3;

/**
 * A job status written into the SQL text, never bound as a parameter: a partial index restricted on the status
 * (`jobs_pending_dedup_key_index … where status = 'pending'`) serves only a query whose text says that status. A bound
 * status also made SQLite plan the statement again on every run; on SQLite
 * every bound value is now written `+?`, which the planner never reads (unary-plus-parameters.ts), so a bound status
 * would lose the index instead. Statuses are our constants, never input.
 */
function literal(status: JobStatus) {
  return sql.lit(status);
}

const insertJob = preparedQuery((db, row: Insertable<JobsTable>, dialect: StoreDialect) => {
  const enqueueOrder = dialect.nextJobEnqueueOrder(db);
  return db
    .insertInto('jobs')
    .values({ ...row, ...(enqueueOrder === undefined ? {} : { enqueue_order: enqueueOrder }) })
    .returningAll();
});

const completeJob = preparedQuery((db, params: { id: string; updatedAt: string }) =>
  db
    .updateTable('jobs')
    .set({ status: JobStatus.COMPLETED, lease_until: null, updated_at: params.updatedAt })
    .where('id', '=', params.id)
    .where('status', '=', literal(JobStatus.RUNNING)),
);

/** One statement: the runner asks after every batch. */
const nextDueAt = preparedQuery((db, _params: Record<string, never>) =>
  db.selectNoFrom((expression) => [
    expression
      .selectFrom('jobs')
      .select((inner) => inner.fn.min('run_at').as('at'))
      .where('status', '=', literal(JobStatus.PENDING))
      .as('pending_at'),
    expression
      .selectFrom('jobs')
      .select((inner) => inner.fn.min('lease_until').as('at'))
      .where('status', '=', literal(JobStatus.RUNNING))
      .as('lease_at'),
  ]),
);

/** Whether a job of this kind and participant holds later ones back ({@link holdsBackLaterJobs}). */
const earlierActive = preparedQuery((db, params: { kind: string; participantId: string; nowText: string }) => {
  const sameKey = sql<SqlBool>`${sql.ref('jobs.participant_id')} = ${params.participantId} and ${sql.ref('jobs.kind')} = ${params.kind}`;
  return db
    .selectFrom('jobs')
    .select('id')
    .where(holdsBackLaterJobs('jobs', params.nowText, sameKey))
    .limit(literalLimit(1));
});

export function createJobRepository(db: Kysely<Database>, dialect: StoreDialect): JobRepository {
  return {
    enqueue(job, now, options = {}) {
      // Cancel-then-insert must be atomic: between the two, another enqueue with the same key would find no pending
      // job to replace and the unique index on pending dedup keys would reject one of them.
      return inTransaction(db, async (transaction) => {
        if (job.dedupKey !== undefined) await cancelPendingByKey(transaction, job.dedupKey, now);
        const { claimFor } = options;
        const claimed =
          claimFor !== undefined &&
          job.dedupKey === undefined &&
          job.runAt.getTime() <= now.getTime() &&
          !(
            job.participantId !== undefined &&
            (await hasEarlierActive(transaction, job.kind, job.participantId, toTimestamp(now)))
          );
        const { rows } = await insertJob.execute(
          transaction,
          {
            id: job.id,
            kind: job.kind,
            participant_id: job.participantId ?? null,
            run_at: toTimestamp(job.runAt),
            payload: toJson(job.payload),
            status: claimed ? JobStatus.RUNNING : JobStatus.PENDING,
            attempts: claimed ? 1 : 0,
            max_attempts: job.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
            last_error: null,
            lease_owner: claimed ? claimFor.owner : null,
            lease_until: claimed ? toTimestamp(new Date(now.getTime() + claimFor.leaseMs)) : null,
            dedup_key: job.dedupKey ?? null,
            created_at: toTimestamp(now),
            updated_at: toTimestamp(now),
          },
          dialect,
        );
        // A claimed job is already its runner's: there is nothing for other runners to wake up for.
        if (!claimed) await dialect.announceJobEnqueued(transaction);
        return toJob(firstRow(rows));
      });
    },

    async get(id) {
      const row = await db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toJob(row);
    },

    cancelByKey(dedupKey, now) {
      return cancelPendingByKey(db, dedupKey, now);
    },

    async cancelById(id, now) {
      const result = await db
        .updateTable('jobs')
        .set({ status: JobStatus.CANCELLED, updated_at: toTimestamp(now) })
        .where('id', '=', id)
        .where('status', '=', literal(JobStatus.PENDING))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async cancelForParticipant(participantId, now) {
      const result = await db
        .updateTable('jobs')
        .set({ status: JobStatus.CANCELLED, updated_at: toTimestamp(now) })
        .where('participant_id', '=', participantId)
        .where('status', '=', literal(JobStatus.PENDING))
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    claimDue({ now, owner, leaseMs, limit, kinds, orderedKinds }) {
      if (limit <= 0 || kinds?.length === 0) return Promise.resolve([]);
      const nowText = toTimestamp(now);
      return inTransaction(db, async (transaction) => {
        // Two queries, each walking an index in claim order and stopping after `limit` (pending jobs due by
        // `(status, run_at, enqueue_order)`; running jobs whose lease expired by `(status, lease_until)`): one query
        // with the OR of both had to collect and sort every due job on each claim (see migration 011).
        const candidates = (status: JobStatus) => {
          let query = transaction
            .selectFrom('jobs')
            .select(['id', 'run_at', 'enqueue_order'])
            .where('status', '=', literal(status))
            .where(
              status === JobStatus.PENDING ? 'run_at' : 'lease_until',
              status === JobStatus.PENDING ? '<=' : '<',
              nowText,
            )
            .orderBy('run_at')
            .orderBy('enqueue_order')
            .limit(literalLimit(limit));
          if (kinds !== undefined) query = query.where('kind', 'in', kinds);
          if (orderedKinds !== undefined && orderedKinds.length > 0) {
            query = query.where((expression) =>
              expression.or([
                expression('kind', 'not in', orderedKinds),
                expression('participant_id', 'is', null),
                expression.not(
                  expression.exists(
                    expression
                      .selectFrom('jobs as earlier')
                      .select('earlier.id')
                      .whereRef('earlier.participant_id', '=', 'jobs.participant_id')
                      .whereRef('earlier.kind', '=', 'jobs.kind')
                      .whereRef('earlier.enqueue_order', '<', 'jobs.enqueue_order')
                      .where(holdsBackLaterJobs('earlier', nowText)),
                  ),
                ),
              ]),
            );
          }
          return dialect.lockClaimCandidates(query).execute();
        };
        const pending = await candidates(JobStatus.PENDING);
        const expired = await candidates(JobStatus.RUNNING);
        const inClaimOrder = (a: (typeof pending)[number], b: (typeof pending)[number]): number =>
          fromTimestamp(a.run_at).getTime() - fromTimestamp(b.run_at).getTime() ||
          Number(a.enqueue_order) - Number(b.enqueue_order);
        const ids = [...pending, ...expired]
          .sort(inClaimOrder)
          .slice(0, limit)
          .map((row) => row.id);
        if (ids.length === 0) return [];
        // The claimable condition is checked again so that, even where the dialect cannot lock the candidates, a job
        // another claimer took in the meantime is never taken twice.
        const rows = await transaction
          .updateTable('jobs')
          .set((expression) => ({
            status: JobStatus.RUNNING,
            lease_owner: owner,
            lease_until: toTimestamp(new Date(now.getTime() + leaseMs)),
            attempts: expression('attempts', '+', 1),
            // A held job claimed again is no longer waiting for anything.
            wake_on: null,
            updated_at: nowText,
          }))
          .where('id', 'in', ids)
          .where(isClaimable(nowText))
          .returningAll()
          .execute();
        // RETURNING has no order; the candidates' order is the claim order.
        const claimed = new Map(rows.map((row) => [row.id, toJob(row)]));
        return ids.flatMap((id) => claimed.get(id) ?? []);
      });
    },

    async renewLeases({ ids, owner, leaseUntil, now }) {
      if (ids.length === 0) return 0;
      const result = await db
        .updateTable('jobs')
        .set({ lease_until: toTimestamp(leaseUntil), updated_at: toTimestamp(now) })
        .where('id', 'in', ids)
        .where('status', '=', literal(JobStatus.RUNNING))
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async releaseLeases(now) {
      const result = await db
        .updateTable('jobs')
        // The interrupted run is not an attempt: the process died, the job did not fail. Counting it would give up on
        // a reply's delivery after a few restarts in a row (a deploy loop, repeated kills) and lose the message.
        .set((expression) => ({
          status: JobStatus.PENDING,
          lease_owner: null,
          lease_until: null,
          // A running job was claimed, so attempts ≥ 1.
          attempts: expression('attempts', '-', 1),
          updated_at: toTimestamp(now),
        }))
        .where('status', '=', literal(JobStatus.RUNNING))
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async complete(id, now) {
      await completeJob.execute(db, { id, updatedAt: toTimestamp(now) });
    },

    fail(id, error, now, retryAt) {
      return inTransaction(db, async (transaction) => {
        const job = await transaction
          .selectFrom('jobs')
          .select('dedup_key')
          .where('id', '=', id)
          .where('status', '=', literal(JobStatus.RUNNING))
          .executeTakeFirst();
        if (job === undefined) return;
        const failure = { last_error: error, lease_until: null, updated_at: toTimestamp(now) };
        let status: JobStatus = retryAt === undefined ? JobStatus.FAILED : JobStatus.PENDING;
        // A job enqueued with the same key while this one ran has replaced it; a retry would make a second pending
        // job with the key, which the unique index forbids and which would run the work twice.
        if (status === JobStatus.PENDING && job.dedup_key !== null) {
          const replacement = await transaction
            .selectFrom('jobs')
            .select('id')
            .where('dedup_key', '=', job.dedup_key)
            .where('status', '=', literal(JobStatus.PENDING))
            .executeTakeFirst();
          if (replacement !== undefined) status = JobStatus.CANCELLED;
        }
        await transaction
          .updateTable('jobs')
          .set(
            status === JobStatus.PENDING && retryAt !== undefined
              ? { ...failure, status, run_at: toTimestamp(retryAt), lease_owner: null }
              : { ...failure, status },
          )
          .where('id', '=', id)
          .execute();
      });
    },

    hold(id, { until, now, wakeOn }) {
      return inTransaction(db, async (transaction) => {
        const job = await transaction
          .selectFrom('jobs')
          .select('dedup_key')
          .where('id', '=', id)
          .where('status', '=', literal(JobStatus.RUNNING))
          .executeTakeFirst();
        if (job === undefined) return;
        // As in `fail`: a job enqueued with the same key meanwhile has replaced this one.
        const replaced =
          job.dedup_key !== null &&
          (await transaction
            .selectFrom('jobs')
            .select('id')
            .where('dedup_key', '=', job.dedup_key)
            .where('status', '=', literal(JobStatus.PENDING))
            .executeTakeFirst()) !== undefined;
        await transaction
          .updateTable('jobs')
          .set((expression) =>
            replaced
              ? { status: JobStatus.CANCELLED, lease_owner: null, lease_until: null, updated_at: toTimestamp(now) }
              : {
                  status: JobStatus.PENDING,
                  run_at: toTimestamp(until),
                  lease_owner: null,
                  lease_until: null,
                  // The claim counted an attempt; waiting for the channel is not one.
                  attempts: expression('attempts', '-', 1),
                  wake_on: wakeOn ?? null,
                  updated_at: toTimestamp(now),
                },
          )
          .where('id', '=', id)
          .execute();
        if (!replaced) await dialect.announceJobEnqueued(transaction);
      });
    },

    wakeHeld(wakeOn, now) {
      return inTransaction(db, async (transaction) => {
        const nowText = toTimestamp(now);
        const result = await transaction
          .updateTable('jobs')
          .set({ run_at: nowText, updated_at: nowText })
          .where('status', '=', literal(JobStatus.PENDING))
          .where('wake_on', '=', wakeOn)
          .where('run_at', '>', nowText)
          .executeTakeFirst();
        const woken = Number(result.numUpdatedRows);
        if (woken > 0) await dialect.announceJobEnqueued(transaction);
        return woken;
      });
    },

    async nextDueAt() {
      const [row] = (await nextDueAt.execute(db, {})).rows;
      const instants = [row?.pending_at, row?.lease_at]
        .filter((value): value is Date | string => value !== null && value !== undefined)
        .map((value) => fromTimestamp(value));
      if (instants.length === 0) return undefined;
      return new Date(Math.min(...instants.map((instant) => instant.getTime())));
    },

    async listPending(filter = {}) {
      // One query per status: each can walk its status's partial index (migration 014), where `status in (…)` would
      // read the whole table, finished jobs included.
      const withStatus = (status: JobStatus) => {
        let query = db.selectFrom('jobs').selectAll().where('status', '=', literal(status));
        if (filter.participantId !== undefined) query = query.where('participant_id', '=', filter.participantId);
        if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
        return query.execute();
      };
      const rows = [...(await withStatus(JobStatus.PENDING)), ...(await withStatus(JobStatus.RUNNING))];
      const jobs = rows.map((row) => ({ job: toJob(row), order: Number(row.enqueue_order) }));
      jobs.sort((a, b) => a.job.runAt.getTime() - b.job.runAt.getTime() || a.order - b.order);
      return jobs.map(({ job }) => job);
    },

    async getPendingByKey(dedupKey) {
      const row = await db
        .selectFrom('jobs')
        .selectAll()
        .where('dedup_key', '=', dedupKey)
        .where('status', '=', literal(JobStatus.PENDING))
        .executeTakeFirst();
      return row && toJob(row);
    },
  };
}

/**
 * A job that keeps later jobs of its kind and participant waiting, for kinds run in order: due, or running under a
 * valid lease. The claim's `orderedKinds` check and the hand-off's (`enqueue` with `claimFor`) use this one condition.
 * `sameKey` is repeated in each branch of the OR, so that SQLite looks each branch up in the
 * `(participant_id, status, kind, …)` index instead of reading all of a participant's jobs.
 */
function holdsBackLaterJobs(table: 'jobs' | 'earlier', nowText: string, sameKey?: RawBuilder<SqlBool>) {
  const column = (name: 'status' | 'run_at' | 'lease_until') => sql.ref(`${table}.${name}`);
  const also = sameKey ? sql` and ${sameKey}` : sql``;
  return sql<SqlBool>`((${column('status')} = ${literal(JobStatus.PENDING)} and ${column('run_at')} <= ${nowText}${also}) or (${column('status')} = ${literal(JobStatus.RUNNING)} and ${column('lease_until')} >= ${nowText}${also}))`;
}

async function hasEarlierActive(
  db: Kysely<Database>,
  kind: string,
  participantId: string,
  nowText: string,
): Promise<boolean> {
  const { rows } = await earlierActive.execute(db, { kind, participantId, nowText });
  return rows.length > 0;
}

const cancelPending = preparedQuery((db, params: { dedupKey: string; updatedAt: string }) =>
  db
    .updateTable('jobs')
    .set({ status: JobStatus.CANCELLED, updated_at: params.updatedAt })
    .where('dedup_key', '=', params.dedupKey)
    .where('status', '=', literal(JobStatus.PENDING)),
);

async function cancelPendingByKey(db: Kysely<Database>, dedupKey: string, now: Date): Promise<number> {
  const result = await cancelPending.execute(db, { dedupKey, updatedAt: toTimestamp(now) });
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Due (pending and run_at reached) or abandoned (running, but its worker's lease ran out: it crashed or hung): the
 * claim's re-check of jobs it names by id. Written as a CASE, not as the OR of two conditions on indexed columns:
 * given that OR, SQLite walked every due job through the status indexes instead of looking the ids up by primary key,
 * so each claim grew with the backlog (a 9 a.m. burst).
 */
function isClaimable(nowText: string) {
  return sql<SqlBool>`case when status = ${literal(JobStatus.PENDING)} then run_at <= ${nowText} when status = ${literal(JobStatus.RUNNING)} then lease_until < ${nowText} else false end`;
}

export function toJob(row: Selectable<JobsTable>): Job {
  return {
    id: row.id,
    kind: row.kind,
    participantId: row.participant_id ?? undefined,
    runAt: fromTimestamp(row.run_at),
    payload: fromJson<Record<string, unknown>>(row.payload),
    status: row.status as JobStatus,
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    lastError: row.last_error ?? undefined,
    leaseOwner: row.lease_owner ?? undefined,
    leaseUntil: fromOptionalTimestamp(row.lease_until),
    dedupKey: row.dedup_key ?? undefined,
    createdAt: fromTimestamp(row.created_at),
    updatedAt: fromTimestamp(row.updated_at),
  };
}
