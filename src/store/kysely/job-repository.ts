import { type Kysely, type Selectable, sql } from 'kysely';
import { type Job, type JobRepository, JobStatus } from '../ports/job-queue.ts';
import { fromJson, fromOptionalTimestamp, fromTimestamp, toJson, toTimestamp } from './column-codecs.ts';
import type { Database, JobsTable } from './database.ts';
import { inTransaction } from './in-transaction.ts';
import { claimJobRows } from './sql/claim-jobs.ts';
import { completeJobRow, nextDueTimes } from './sql/complete-job.ts';
import { cancelPendingJobByKey, hasEarlierActiveJob, insertJobRow } from './sql/enqueue-job.ts';
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

export function createJobRepository(db: Kysely<Database>, dialect: StoreDialect): JobRepository {
  return {
    enqueue(job, now, options = {}) {
      // Cancel-then-insert must be atomic: between the two, another enqueue with the same key would find no pending
      // job to replace and the unique index on pending dedup keys would reject one of them.
      return inTransaction(db, async (transaction) => {
        if (job.dedupKey !== undefined) await cancelPendingJobByKey(transaction, job.dedupKey, toTimestamp(now));
        const { claimFor } = options;
        const claimed =
          claimFor !== undefined &&
          job.dedupKey === undefined &&
          job.runAt.getTime() <= now.getTime() &&
          !(
            job.participantId !== undefined &&
            (await hasEarlierActiveJob(transaction, job.participantId, job.kind, toTimestamp(now)))
          );
        // A pending job is announced to the other instances by the insert itself (PostgreSQL); a claimed one is
        // already its runner's.
        const row = await insertJobRow(transaction, {
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
        });
        return toJob(row);
      });
    },

    async get(id) {
      const row = await db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toJob(row);
    },

    cancelByKey(dedupKey, now) {
      return cancelPendingJobByKey(db, dedupKey, toTimestamp(now));
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
      const claim = {
        now: nowText,
        owner,
        leaseUntil: toTimestamp(new Date(now.getTime() + leaseMs)),
        limit,
        kinds,
        orderedKinds: orderedKinds ?? [],
      };
      // PostgreSQL claims in one statement; SQLite reads the candidates, then updates them, in one transaction.
      const claimRows =
        dialect.name === 'postgres'
          ? claimJobRows(db, 'postgres', claim)
          : inTransaction(db, (transaction) => claimJobRows(transaction, 'sqlite', claim));
      return claimRows.then((rows) => rows.map(toJob));
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
      await completeJobRow(db, id, toTimestamp(now));
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
      const row = await nextDueTimes(db);
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
