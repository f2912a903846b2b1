/**
 * One run of a claimed job (job-runner-service.ts starts them): its handler under the participant's lock, then the
 * outcome as data: success → `complete` (written with the other runs that finished in the same turn of the event
 * loop, completion-batch.ts); a returned `JobHold` → the same job pending again, no attempt spent; a thrown error →
 * back to pending at now + back-off while attempts remain, else `failed` with a `job-failed` event.
 */
import type { Clock } from '../domain/clock.ts';
import { AppError, errorMessage } from '../domain/errors.ts';
import type { Log } from '../domain/log.ts';
import type { ParticipantLock } from '../store/participant-lock.ts';
import type { Job, Store } from '../store/store.ts';
import type { CompletionBatch } from './completion-batch.ts';
import { isJobHold, type JobCompletion, type JobHandler, type JobHold } from './job-runner.ts';

/** What happened to one run of a job: done, rescheduled for a retry, held (waits, same row), or given up. */
export type JobRunOutcome = 'completed' | 'retrying' | 'held' | 'failed';

export interface JobRunReport {
  /** How late the run started: now − run_at, never negative. */
  lateMs: number;
  outcome: JobRunOutcome;
}

/** 30 s, 60 s, 120 s, … */
export function exponentialBackoff(attempts: number): number {
  return 30_000 * 2 ** Math.max(0, attempts - 1);
}

/** How a job kind was registered (`JobRunner.register`). */
export interface JobRegistration {
  handler: JobHandler;
  lock: boolean;
  ordered: boolean;
}

export function createJobExecution(options: {
  store: Store;
  clock: Clock;
  lock: ParticipantLock;
  log: Log;
  backoff: (attempts: number) => number;
  registrations: ReadonlyMap<string, JobRegistration>;
  completions: CompletionBatch;
  onJobRun?: (job: Job, report: JobRunReport) => void;
}): (job: Job) => Promise<void> {
  const { store, clock, lock, log, backoff, registrations, completions } = options;

  async function settle(job: Job, registration: JobRegistration | undefined, error: unknown): Promise<JobRunOutcome> {
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

  return execute;
}
