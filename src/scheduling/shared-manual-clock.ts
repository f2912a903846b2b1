/**
 * The manual clock shared by several instances (`PROMPTPIPE_CLOCK=manual` on PostgreSQL): the study time lives in
 * the database (`study_clock`), each instance keeps a local copy that follows it (a `clock` notification, and a
 * read at start-up), and `POST /admin/clock` on any instance moves it for all.
 *
 * `advanceTo(target)` is the cluster version of the job runner's: under a cluster-wide lock (one move at a time), it
 * stops at each job's due time in order, and at each stop waits until every job due by then has finished, whichever
 * instance ran it (this instance runs what it can claim; the others, woken by the notification, claim the rest). A
 * job leased to an instance that died is not waited for: a live instance's heartbeat puts it back to pending (its
 * liveness lock is gone), or it is taken over once the clock passes its lease.
 */
import type { ManualClock } from './clock.ts';
import type { JobRunner } from './job-runner.ts';

/** How often the advance looks again at jobs other instances are running. */
const SETTLE_POLL_MS = 20;

export interface SharedManualClock {
  /** Creates the shared time (from the local clock's start) or adopts the existing one; follows later moves. */
  start(): Promise<void>;
  /** `JobRunner.advanceTo` across every instance. Returns how many jobs this instance ran. */
  advanceTo(target: Date): Promise<number>;
}

/**
 * What the shared clock needs of the instances' coordinator: the shared time, the jobs every instance is running, a
 * cluster-wide lock and the clock's notification. PostgreSQL's cluster coordinator implements it
 * (store/postgres/postgres-coordinator.ts; the composition root passes it in).
 */
export interface ClockCoordinator {
  /** The shared time: created with `start` when absent; returns the current shared time. */
  initClock(start: Date): Promise<Date>;
  readClock(): Promise<Date | undefined>;
  /** Moves the shared time forward (never back) and tells every instance; returns the new shared time. */
  advanceClock(instant: Date): Promise<Date>;
  /** Jobs due at `now` that are not finished: pending ones, and running ones on a live instance under a valid lease. */
  countUnfinishedDue(now: Date): Promise<{ pending: number; running: number }>;
  /** The next instant after `now` at which a job becomes claimable. */
  nextClaimableAfter(now: Date): Promise<Date | undefined>;
  /** Serialises `work` across every instance. */
  withClusterLock<T>(name: string, work: () => Promise<T>): Promise<T>;
  /** Calls `listener` whenever any instance moves the shared time. */
  onNotification(topic: 'clock', listener: () => void): void;
}

export function createSharedManualClock(options: {
  clock: ManualClock;
  coordinator: ClockCoordinator;
  runner: Pick<JobRunner, 'runDue' | 'notify'>;
  onError?: (error: unknown) => void;
}): SharedManualClock {
  const { clock, coordinator, runner } = options;

  /** Local time follows the shared time, forward only. */
  function adopt(shared: Date): void {
    if (shared.getTime() > clock.now().getTime()) clock.set(shared);
  }

  async function follow(): Promise<void> {
    const shared = await coordinator.readClock();
    if (shared) adopt(shared);
    runner.notify();
  }

  async function moveTo(instant: Date): Promise<void> {
    adopt(await coordinator.advanceClock(instant));
    runner.notify();
  }

  return {
    async start() {
      const shared = await coordinator.initClock(clock.now());
      clock.set(shared);
      coordinator.onNotification('clock', () => {
        follow().catch((error: unknown) => options.onError?.(error));
      });
    },
    advanceTo(target) {
      return coordinator.withClusterLock('clock', async () => {
        let count = 0;
        /**
         * Runs what this instance can claim, then waits for what the others are running. Done when nothing due is
         * running on a live instance and nothing due could be claimed twice in a row: what is left pending waits
         * behind a dead instance's lease (an ordered delivery) and needs time to move.
         */
        const settle = async (): Promise<void> => {
          let idle = 0;
          for (;;) {
            const ran = await runner.runDue();
            count += ran;
            const unfinished = await coordinator.countUnfinishedDue(clock.now());
            if (unfinished.running === 0 && (unfinished.pending === 0 || ran === 0)) {
              idle += 1;
              if (unfinished.pending === 0 || idle >= 2) return;
            } else {
              idle = 0;
            }
            await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
          }
        };
        const shared = await coordinator.readClock();
        if (shared) adopt(shared);
        await settle();
        for (;;) {
          const next = await coordinator.nextClaimableAfter(clock.now());
          if (!next || next.getTime() > target.getTime()) break;
          await moveTo(next);
          await settle();
        }
        if (clock.now().getTime() < target.getTime()) await moveTo(target);
        await settle();
        return count;
      });
    },
  };
}
