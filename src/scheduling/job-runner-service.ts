/**
 * The durable job runner (implements the `JobRunner` port of `job-runner.ts`).
 *
 * - Claiming: `jobs.claimDue` marks due jobs running under a lease owned by this runner and increments their
 *   attempts; jobs whose lease expired (a crashed process) are claimed again by the same call, so recovery after a
 *   restart needs nothing more than running the runner.
 * - Hand-off: where this runner is the only claimer (SQLite), a delivery that can go now is created already claimed
 *   under its lease (`handOffClaim`, `jobs.enqueue(…, { claimFor })`) and started once committed (`runHandedOff`),
 *   without a claim transaction; what it holds back (the participant's next delivery) is claimed when it finishes.
 * - Running: one handler per kind, under the participant's lock unless registered with `lock: false`.
 * - Outcome as data: success → `complete`, written with the other runs that finished in the same turn of the event
 *   loop (completion-batch.ts); a returned `JobHold` → the same job pending again (`jobs.hold`), no attempt spent;
 *   a thrown error → back to pending at now + exponential back-off while attempts remain, else `failed` with the
 *   error kept and a `job-failed` event.
 * - Heartbeat (lease-heartbeat.ts): while jobs are in flight, their leases are renewed every third of a lease, at
 *   least every 10 s (a 30 s lease by default), so only a dead runner's jobs are ever taken over
 *   (`PROMPTPIPE_JOB_LEASE` bounds how long that takes); a started runner's start and beats release the jobs of owners
 *   known to be dead at once (`releaseAbandonedJobs`: PostgreSQL, an instance's liveness lock gone).
 * - Waking: on the system clock the loop sleeps until `jobs.nextDueAt()` (capped, so a jump of the wall clock is
 *   noticed) and `notify()` cuts the sleep short. On a manual clock time only moves through `advanceTo`, so the
 *   loop only wakes on `notify()` (e.g. a delivery enqueued "now" in a `PROMPTPIPE_CLOCK=manual` server). A finished
 *   run wakes it when a slot was awaited or something is due now (`afterRun`), not after every job.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../domain/clock.ts';
import { AppError, errorMessage } from '../domain/errors.ts';
import type { Log } from '../domain/log.ts';
import type { ParticipantLock } from '../store/participant-lock.ts';
import { type Job, JobStatus, type Store } from '../store/store.ts';
import { isManualClock } from './clock.ts';
import { createCompletionBatch } from './completion-batch.ts';
import { isJobHold, type JobCompletion, type JobHandler, type JobHold, type JobRunner } from './job-runner.ts';
import { createLeaseHeartbeat } from './lease-heartbeat.ts';

/** What happened to one run of a job: done, rescheduled for a retry, held (waits, same row), or given up. */
export type JobRunOutcome = 'completed' | 'retrying' | 'held' | 'failed';

export interface JobRunReport {
  /** How late the run started: now − run_at, never negative. */
  lateMs: number;
  outcome: JobRunOutcome;
}

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
   * {@link HAND_OFF_LIMIT_BATCHES} times this many jobs in all.
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

/** 30 s, 60 s, 120 s, … */
export function exponentialBackoff(attempts: number): number {
  return 30_000 * 2 ** Math.max(0, attempts - 1);
}

/**
 * Handed-off deliveries are not held to the batch size: what produces them (a turn, a prompt being sent) is already
 * bounded, and under load the claimed jobs fill every slot, so a bound of one batch left nearly every delivery to a
 * claim of its own (measured: the 50-participant load still made a claim per turn). They may run while fewer than this
 * many batches of jobs are; a job handed off but not yet committed holds no slot yet, so a few more may start.
 */
const HAND_OFF_LIMIT_BATCHES = 5;

/**
 * When the queue says something is claimable now but the claim found nothing (another instance took it, or a lease
 * expires exactly now), sleep this long rather than spin.
 */
const IDLE_RECHECK_MS = 1_000;
/** After an error of the store itself (database unavailable), wait before trying again. */
const STORE_ERROR_PAUSE_MS = 5_000;

interface Registration {
  handler: JobHandler;
  lock: boolean;
  ordered: boolean;
}

export function createJobRunner(options: JobRunnerOptions): JobRunner {
  const { store, clock, lock, log } = options;
  const owner = options.owner ?? `runner_${randomUUID()}`;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const backoff = options.backoff ?? exponentialBackoff;
  const maxSleepMs = options.maxSleepMs ?? DEFAULT_MAX_SLEEP_MS;

  const registrations = new Map<string, Registration>();
  const completions = createCompletionBatch(store);
  const inFlight = new Set<Promise<void>>();
  /** The ids of the jobs this runner is running (claimed and not settled), for the lease heartbeat. */
  const runningIds = new Set<string>();
  let running = false;
  const heartbeat = createLeaseHeartbeat({
    store,
    clock,
    log,
    owner,
    leaseMs,
    runningIds,
    isStarted: () => running,
    releaseAbandonedJobs: options.releaseAbandonedJobs,
    onReleased: () => wake(),
  });

  let loop: Promise<void> | undefined;
  /** Set by notify() while the loop is busy, so the wake-up is not lost before the loop goes to sleep. */
  let wakeRequested = false;
  let wakeSleeper: (() => void) | undefined;

  function wake(): void {
    wakeRequested = true;
    wakeSleeper?.();
  }

  /** Handed-off jobs among those in flight: they run beside the claimed ones, not in their slots. */
  let handedOffRunning = 0;
  const claimedRunning = (): number => inFlight.size - handedOffRunning;

  /** True while every slot is taken: the loop then sleeps until a run finishes. */
  let saturated = false;

  /**
   * After a run of the loop's finished: claim again at once if the loop was waiting for a free slot, or if something
   * is due now (typically a participant's next delivery, which waited for this one to finish). Otherwise the loop's
   * own wake-up time stands: a one-statement look instead of a whole claim after every job.
   */
  function afterRun(): void {
    // A stopped runner claims nothing more (and its store may be closing).
    if (!running) return;
    if (saturated) {
      wake();
      return;
    }
    store.jobs.nextDueAt().then(
      (next) => {
        if (next !== undefined && next.getTime() <= clock.now().getTime()) wake();
      },
      () => wake(),
    );
  }

  /** Resolves after `milliseconds` (undefined: only on wake) or as soon as wake() is called. */
  function sleep(milliseconds: number | undefined): Promise<void> {
    return new Promise((resolve) => {
      const timer = milliseconds === undefined ? undefined : setTimeout(done, milliseconds);
      function done(): void {
        if (timer) clearTimeout(timer);
        wakeSleeper = undefined;
        resolve();
      }
      wakeSleeper = done;
    });
  }

  async function settle(job: Job, registration: Registration | undefined, error: unknown): Promise<JobRunOutcome> {
    const message = errorMessage(error);
    const now = clock.now();
    // A job re-claimed after its lease expired may already be past its attempts (a handler that crashes the
    // process): it is given up rather than retried forever.
    if (registration && job.attempts < job.maxAttempts) {
      const retryAt = new Date(now.getTime() + backoff(job.attempts));
      await store.jobs.fail(job.id, message, now, retryAt);
      log.warn(
        { jobId: job.id, kind: job.kind, attempts: job.attempts, retryAt: retryAt.toISOString(), error: message },
        'job failed; will retry',
      );
      return 'retrying';
    }
    await store.transaction(async (tx) => {
      await tx.jobs.fail(job.id, message, now);
      await tx.events.record({
        ...(job.participantId ? { participantId: job.participantId } : {}),
        type: 'job-failed',
        data: { job_id: job.id, kind: job.kind, attempts: job.attempts, error: message },
        createdAt: now,
      });
    });
    log.error({ jobId: job.id, kind: job.kind, attempts: job.attempts, error: message }, 'job failed for good');
    return 'failed';
  }

  /** Never rejects: every failure of a run ends up as job data or a log line. */
  function execute(job: Job): Promise<void> {
    return executeUnguarded(job).catch((error: unknown) => {
      log.error({ jobId: job.id, kind: job.kind, error: errorMessage(error) }, 'job run failed unexpectedly');
    });
  }

  async function executeUnguarded(job: Job): Promise<void> {
    const lateMs = Math.max(0, clock.now().getTime() - job.runAt.getTime());
    const registration = registrations.get(job.kind);
    let outcome: JobRunOutcome;
    let completion: JobCompletion | undefined;
    let held: JobHold | undefined;
    try {
      if (!registration) {
        throw new AppError('internal', `No handler is registered for job kind "${job.kind}".`);
      }
      if (job.attempts > job.maxAttempts) {
        throw new AppError(
          'internal',
          `Gave up after ${job.maxAttempts} attempts: the job was claimed again after its lease expired (the process probably stopped while running it).`,
        );
      }
      const run = () => registration.handler(job);
      const result = registration.lock && job.participantId ? await lock.run(job.participantId, run) : await run();
      if (typeof result === 'function') completion = result;
      else if (isJobHold(result)) held = result;
    } catch (error) {
      outcome = await settle(job, registration, error).catch((settleError: unknown) => {
        // The lease will expire and the job will be claimed again: nothing is lost.
        log.error({ jobId: job.id, error: errorMessage(settleError) }, 'could not record a job failure');
        return 'retrying' as const;
      });
      options.onJobRun?.(job, { lateMs, outcome });
      return;
    }
    try {
      if (held) {
        // Not completed: the same row waits (one row per held message, however long the wait).
        const { until, wakeOn } = held.hold;
        await store.jobs.hold(job.id, { until, now: clock.now(), ...(wakeOn === undefined ? {} : { wakeOn }) });
        outcome = 'held';
      } else {
        await completions.complete(job.id, clock.now(), completion);
        outcome = 'completed';
      }
    } catch (error) {
      // The handler's own work is committed (its completion writes are not); the job will run again when its lease
      // expires, and handlers re-check their preconditions, so the repeat is harmless.
      log.error({ jobId: job.id, error: errorMessage(error) }, 'could not mark a job completed');
      outcome = 'retrying';
    }
    options.onJobRun?.(job, { lateMs, outcome });
  }

  /** Runs a job this runner holds the lease of, tracked for the heartbeat and for stop(). */
  function start(job: Job): Promise<void> {
    runningIds.add(job.id);
    heartbeat.start();
    const completion = execute(job);
    inFlight.add(completion);
    void completion.finally(() => {
      inFlight.delete(completion);
      runningIds.delete(job.id);
    });
    return completion;
  }

  /** Claims up to `limit` due jobs and starts them; returns their completions. */
  async function claimAndStart(limit: number): Promise<Promise<void>[]> {
    if (limit <= 0) return [];
    const orderedKinds = [...registrations].filter(([, registration]) => registration.ordered).map(([kind]) => kind);
    const jobs = await store.jobs.claimDue({
      now: clock.now(),
      owner,
      leaseMs,
      limit,
      ...(orderedKinds.length > 0 ? { orderedKinds } : {}),
    });
    return jobs.map(start);
  }

  async function runDue(): Promise<number> {
    let count = 0;
    for (;;) {
      const started = await claimAndStart(batchSize);
      if (started.length === 0) return count;
      count += started.length;
      await Promise.all(started);
    }
  }

  /** How long the system-clock loop may sleep; undefined = until notified. */
  async function sleepDuration(): Promise<number | undefined> {
    if (isManualClock(clock)) return undefined;
    const next = await store.jobs.nextDueAt();
    if (!next) return maxSleepMs;
    const untilDue = next.getTime() - clock.now().getTime();
    return untilDue <= 0 ? IDLE_RECHECK_MS : Math.min(untilDue, maxSleepMs);
  }

  async function runLoop(): Promise<void> {
    while (running) {
      wakeRequested = false;
      try {
        const free = batchSize - claimedRunning();
        const started = await claimAndStart(free);
        for (const completion of started) void completion.finally(afterRun);
        // A full batch means more may be due right now.
        if (free > 0 && started.length === free) continue;
        // Every slot taken: sleep until a run finishes (afterRun wakes the loop).
        saturated = batchSize - claimedRunning() <= 0;
        if (!running || wakeRequested) continue;
        const duration = saturated ? undefined : await sleepDuration();
        if (!running || wakeRequested) continue;
        await sleep(duration);
      } catch (error) {
        log.error({ error: errorMessage(error) }, 'job runner loop failed; pausing before retrying');
        if (running) await sleep(STORE_ERROR_PAUSE_MS);
      }
    }
  }

  return {
    register(kind, handler, registerOptions) {
      if (registrations.has(kind)) {
        throw new AppError('conflict', `A handler for job kind "${kind}" is already registered.`);
      }
      registrations.set(kind, {
        handler,
        lock: registerOptions?.lock ?? true,
        ordered: registerOptions?.ordered ?? false,
      });
    },
    start() {
      if (running) return;
      running = true;
      loop = runLoop();
      heartbeat.start();
      heartbeat.releaseAbandoned();
    },
    async stop() {
      running = false;
      wake();
      await loop;
      loop = undefined;
      // The heartbeat goes on renewing the leases of the jobs still finishing, and stops after them.
      await Promise.allSettled([...inFlight]);
      heartbeat.stop();
    },
    notify() {
      wake();
    },
    handOffClaim() {
      return running && inFlight.size < HAND_OFF_LIMIT_BATCHES * batchSize ? { owner, leaseMs } : undefined;
    },
    runHandedOff(job) {
      if (!running || job.status !== JobStatus.RUNNING || job.leaseOwner !== owner) return;
      handedOffRunning += 1;
      // Like a claimed run, a finished one wakes the loop when a later job (the participant's next) is due now.
      void start(job).finally(() => {
        handedOffRunning -= 1;
        afterRun();
      });
    },
    runDue,
    async advanceTo(target) {
      if (!isManualClock(clock)) {
        throw new AppError('invalid_input', 'advanceTo needs the manual clock (PROMPTPIPE_CLOCK=manual).');
      }
      let count = await runDue();
      for (;;) {
        // Jobs the background loop is running still hold leases: moving time past them would take them back.
        await Promise.allSettled([...inFlight]);
        const next = await store.jobs.nextDueAt();
        if (!next || next.getTime() > target.getTime()) break;
        if (next.getTime() > clock.now().getTime()) clock.set(next);
        const ran = await runDue();
        count += ran;
        if (ran === 0) {
          // Claimable "at" next but not yet (a lease expiring exactly now is taken back only after it): step past.
          const nudged = clock.now().getTime() + 1;
          if (nudged > target.getTime()) break;
          clock.set(new Date(nudged));
        }
      }
      if (clock.now().getTime() < target.getTime()) clock.set(target);
      // "Everything due has finished" includes what the background loop claimed meanwhile (a delivery it picked up
      // on notify) and what those jobs enqueued for now.
      for (;;) {
        count += await runDue();
        if (inFlight.size === 0) return count;
        await Promise.allSettled([...inFlight]);
      }
    },
  };
}
