/**
 * The job queue's part of the storage port (`../store.ts`): durable timed jobs claimed under a lease. What the job
 * runner and every handler that enqueues or cancels a job use.
 */

// ---------------------------------------------------------------------------------------------------------------
// Durable jobs

export const JobStatus = {
  PENDING: 'pending',
  RUNNING: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
} as const;
export type JobStatus = (typeof JobStatus)[keyof typeof JobStatus];

export interface NewJob {
  id: string;
  kind: string;
  participantId?: string;
  runAt: Date;
  payload: Record<string, unknown>;
  maxAttempts?: number;
  /** Unique among pending jobs: enqueuing with a key replaces (cancels) the pending job holding it. */
  dedupKey?: string;
}

export interface Job {
  id: string;
  kind: string;
  participantId: string | undefined;
  runAt: Date;
  payload: Record<string, unknown>;
  status: JobStatus;
  attempts: number;
  maxAttempts: number;
  lastError: string | undefined;
  leaseOwner: string | undefined;
  leaseUntil: Date | undefined;
  dedupKey: string | undefined;
  createdAt: Date;
  updatedAt: Date;
}

/** A lease to create a job under, already claimed (see {@link JobRepository.enqueue}). */
export interface JobClaim {
  owner: string;
  leaseMs: number;
}

export interface JobRepository {
  /**
   * Enqueue-or-replace: a pending job with the same dedup key is cancelled in the same statement group.
   *
   * With `claimFor`, the job is created already claimed (running under that lease, its first attempt counted) when a
   * claim would take it now: it is due, has no dedup key, and no earlier job of its kind and participant is due or
   * running under a valid lease (the order `claimDue` keeps for `orderedKinds`). Otherwise it is queued as usual; the
   * returned status says which. Only for a runner that is the only claimer (SQLite: one process): two instances
   * enqueuing for one participant at once could both find no earlier job.
   */
  enqueue(job: NewJob, now: Date, options?: { claimFor?: JobClaim }): Promise<Job>;
  get(id: string): Promise<Job | undefined>;
  /** Cancels the pending job holding this key; returns how many were cancelled (0 or 1). */
  cancelByKey(dedupKey: string, now: Date): Promise<number>;
  cancelById(id: string, now: Date): Promise<boolean>;
  /** Cancels every pending job of a participant (pause, withdraw, delete). */
  cancelForParticipant(participantId: string, now: Date): Promise<number>;
  /**
   * Claims up to `limit` jobs that are due (pending with run_at <= now) or whose lease expired (running with
   * lease_until < now), oldest run_at first: marks them running, sets the lease and increments attempts.
   * On PostgreSQL this uses `FOR UPDATE SKIP LOCKED` so several instances never claim the same job.
   */
  claimDue(options: {
    now: Date;
    owner: string;
    leaseMs: number;
    limit: number;
    kinds?: string[];
    /**
     * Kinds run one at a time per participant, in enqueue order, across every claimer (deliveries: a prompt reaches
     * the gateway before its poll whichever instance claims which). A job of these kinds is not claimed while an
     * earlier one of the same kind and participant is due or running under a valid lease.
     */
    orderedKinds?: string[];
  }): Promise<Job[]>;
  /**
   * Extends the leases of jobs this owner is still running (a heartbeat), so a long run is never taken over by
   * another instance while its owner is alive. Jobs no longer running under `owner` are left alone. Returns how many.
   */
  renewLeases(options: { ids: string[]; owner: string; leaseUntil: Date; now: Date }): Promise<number>;
  complete(id: string, now: Date): Promise<void>;
  /**
   * Makes every running job claimable again (pending, lease cleared; attempts kept) and returns how many. Start-up
   * recovery after a crash, ONLY where this process is the single runner (SQLite): a killed process's leases would
   * otherwise hold its jobs (a reply's delivery) until they expire. The interrupted run does not count as an attempt
   * (the process died, not the job), so restarts in a row never exhaust a job's attempts.
   */
  releaseLeases(now: Date): Promise<number>;
  /** With `retryAt`: back to pending at that time. Without: `failed`, keeping the error. */
  fail(id: string, error: string, now: Date, retryAt?: Date): Promise<void>;
  /**
   * Holds a running job: back to pending at `until`, the SAME row, its claim not counted as an attempt (the job did
   * not fail, its channel was not there). With `wakeOn` (a channel's name), {@link wakeHeld} brings it forward when
   * that channel connects. A job that is no longer running is left alone.
   */
  hold(id: string, options: { until: Date; now: Date; wakeOn?: string }): Promise<void>;
  /** Makes every job held for `wakeOn` due now; returns how many. */
  wakeHeld(wakeOn: string, now: Date): Promise<number>;
  /** The earliest instant at which something becomes claimable (a pending run_at or a running lease expiry). */
  nextDueAt(): Promise<Date | undefined>;
  /** Pending (and running) jobs, by run_at. */
  listPending(filter?: { participantId?: string; kind?: string }): Promise<Job[]>;
  getPendingByKey(dedupKey: string): Promise<Job | undefined>;
}

// ---------------------------------------------------------------------------------------------------------------
// The job queue's repository

export interface JobQueueRepositories {
  readonly jobs: JobRepository;
}
