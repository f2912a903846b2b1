/** The settings of the durable job runner (job-runner-service.ts) and their defaults. */
import type { Clock } from '../domain/clock.ts';
import type { Log } from '../domain/log.ts';
import type { ParticipantLock } from '../store/participant-lock.ts';
import type { Job, Store } from '../store/store.ts';
import type { JobRunReport } from './job-execution.ts';

export interface JobRunnerOptions {
  store: Store;
  clock: Clock;
  lock: ParticipantLock;
  log: Log;
  /** The lease owner written on claimed jobs; unique per process. */
  owner?: string;
  /**
   * How long a claim holds a job before another runner may take it back. Default 30 s: the heartbeat renews it while
   * the job runs, so it only bounds how long a dead runner's jobs (a participant's reply, and the ones queued behind
   * it) wait.
   */
  leaseMs?: number;
  /**
   * Puts back to pending the running jobs whose owner is known to be dead, without waiting for their lease, and says
   * how many (PostgreSQL: `ClusterCoordinator.releaseAbandonedJobs`). Called at start and on every heartbeat.
   */
  releaseAbandonedJobs?: (now: Date) => Promise<number>;
  /**
   * At most this many claimed jobs run at once. Default 10. Handed-off deliveries may run beside them, up to
   * `HAND_OFF_LIMIT_BATCHES` (job-runner-service.ts) times this many jobs in all.
   */
  batchSize?: number;
  /** Delay before retry number `attempts` (1 after the first failure). Default 30 s · 2^(attempts − 1). */
  backoff?: (attempts: number) => number;
  /** The longest the system-clock loop sleeps without looking at the queue again. Default 60 s. */
  maxSleepMs?: number;
  /** Called after each run (metrics: lateness histogram, outcome counter). */
  onJobRun?: (job: Job, report: JobRunReport) => void;
}

export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_BATCH_SIZE = 10;
export const DEFAULT_MAX_SLEEP_MS = 60_000;
