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
 * - Outcome as data (job-execution.ts): completed, held, retried after a back-off, or failed for good.
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
import { AppError, errorMessage } from '../domain/errors.ts';
import { type Job, JobStatus } from '../store/store.ts';
import { isManualClock } from './clock.ts';
import { createCompletionBatch } from './completion-batch.ts';
import { createJobExecution, exponentialBackoff, type JobRegistration } from './job-execution.ts';
import type { JobRunner } from './job-runner.ts';
import {
  DEFAULT_BATCH_SIZE,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_SLEEP_MS,
  type JobRunnerOptions,
} from './job-runner-options.ts';
import { createLeaseHeartbeat } from './lease-heartbeat.ts';

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

export function createJobRunner(options: JobRunnerOptions): JobRunner {
  const { store, clock, lock, log } = options;
  const owner = options.owner ?? `runner_${randomUUID()}`;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const backoff = options.backoff ?? exponentialBackoff;
  const maxSleepMs = options.maxSleepMs ?? DEFAULT_MAX_SLEEP_MS;

  const registrations = new Map<string, JobRegistration>();
  const execute = createJobExecution({
    store,
    clock,
    lock,
    log,
    backoff,
    registrations,
    completions: createCompletionBatch(store),
    ...(options.onJobRun ? { onJobRun: options.onJobRun } : {}),
  });
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
