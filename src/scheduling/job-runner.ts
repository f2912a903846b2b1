/**
 * The durable job runner's port. Implemented by `createJobRunner` (`job-runner-service.ts`).
 *
 * Glossary:
 * - kind: the job type (`daily_prompt`, `daily_prompt_reminder`, `deliver_message`, …); one handler per kind.
 * - dedup key: `daily_prompt_reminder:{participantId}` etc.; unique among pending jobs (see store.ts).
 * - lease: a claimed job belongs to this runner until `leaseUntil`; an expired lease is taken back.
 *
 * Handlers run under the participant's lock (when the job has a participant) and MUST re-check their precondition
 * before acting: the state may have changed since the job was enqueued (a reply races a due reminder).
 */
import type { Job, JobClaim } from '../store/ports/job-queue.ts';

/**
 * Writes a handler leaves for the end of its run, made through the store: the runner calls it inside the unit of
 * work that marks the job completed, which they join, so they commit together (a delivery's receipt and its job: one
 * commit instead of two). They are lost, with the completion, if that unit of work fails; the job then runs again.
 */
export type JobCompletion = () => Promise<void>;

/**
 * What a handler returns when its job must wait rather than run now (a delivery whose channel is not connected): the
 * runner puts the same job back to pending at `until`, its attempt not counted (`JobRepository.hold`), instead of
 * completing it. With `wakeOn`, `JobRepository.wakeHeld` brings it forward when that channel connects.
 */
export interface JobHold {
  readonly hold: { until: Date; wakeOn?: string };
}

export function isJobHold(value: unknown): value is JobHold {
  return typeof value === 'object' && value !== null && 'hold' in value;
}

/**
 * Runs one job; may return a {@link JobCompletion}, or a {@link JobHold}. Throwing fails the run (retried with
 * back-off).
 */
// biome-ignore lint/suspicious/noConfusingVoidType: most handlers are `async () => {…}`, whose Promise<void> must fit.
export type JobHandler = (job: Job) => Promise<void | JobCompletion | JobHold>;

export interface JobRunner {
  /** One handler per kind. `lock: false` runs without the participant lock (for work that needs no ordering). */
  /**
   * `ordered: true`: jobs of this kind run one at a time per participant, in enqueue order, across every instance
   * (deliveries).
   */
  register(kind: string, handler: JobHandler, options?: { lock?: boolean; ordered?: boolean }): void;
  /** Starts the wake loop on the system clock: sleeps until the next job is due, never polls on a fixed lag. */
  start(): void;
  /** Stops taking jobs and waits for the ones in flight. */
  stop(): Promise<void>;
  /** Tells a sleeping runner that a job was enqueued (it recomputes its wake-up time). */
  notify(): void;
  /**
   * Hand-off, for a runner that is the only claimer (SQLite): the lease under which a job enqueued now may be created
   * already claimed by this runner (`jobs.enqueue(…, { claimFor })`), so that it runs without a claim of its own. Undefined
   * while the runner is stopped or every slot is taken: the job is then queued as usual.
   */
  handOffClaim(): JobClaim | undefined;
  /**
   * Runs a job created claimed under {@link handOffClaim}, once the transaction that created it has committed. A
   * stopped runner leaves it: its lease is released at the next start (SQLite) like any interrupted run.
   */
  runHandedOff(job: Job): void;
  /** Claims and runs every job due at the clock's current time, until none is left. Returns how many ran. */
  runDue(): Promise<number>;
  /**
   * Manual clock only: moves time forward to `target`, stopping at each job's due time in order (so a reminder due
   * at 14:00 runs, at 14:00, before the next day's 09:00 prompt), and returns when everything due has finished.
   */
  advanceTo(target: Date): Promise<number>;
}
