/**
 * The job runner's heartbeat. A claimed job is its runner's until its lease runs out (`jobs.lease_until`); the
 * heartbeat renews the leases of the jobs in flight, so a long run (a slow model call, a slow gateway, a wait for the
 * participant's lock) is never taken over while its runner lives, and the lease can stay short: it only bounds how long
 * a dead runner's jobs wait. It beats while jobs are in flight (a started runner's, `runDue`'s, those a stop() waits
 * for) and while the runner is started; a started runner's beats also release the jobs of owners known to be dead
 * (PostgreSQL: their instance's liveness lock is gone), so those are taken over at once rather than after their lease.
 */

import type { Clock } from '../domain/clock.ts';
import { errorMessage } from '../domain/errors.ts';
import type { Log } from '../domain/log.ts';
import type { Store } from '../store/store.ts';

/** The longest time between two beats, whatever the lease: how long a dead instance's jobs wait at most. */
export const MAX_HEARTBEAT_MS = 10_000;

/**
 * The heartbeat's period: a third of the lease, so two renewals in a row may be late (a slow database, a busy event
 * loop) before another runner could take a live job; at most once a second, and at least every
 * {@link MAX_HEARTBEAT_MS}, so that a long lease does not slow the takeover of a dead instance's jobs.
 */
export function leaseRenewalIntervalMs(leaseMs: number): number {
  return Math.max(1_000, Math.min(MAX_HEARTBEAT_MS, Math.floor(leaseMs / 3)));
}

export interface LeaseHeartbeat {
  /** Beats from now on, until stopped, or until a beat finds the runner stopped and no job in flight. Idempotent. */
  start(): void;
  stop(): void;
  /** Releases the jobs of dead owners now (a runner's start), besides on every beat of a started runner. */
  releaseAbandoned(): void;
}

export function createLeaseHeartbeat(options: {
  store: Store;
  clock: Clock;
  log: Log;
  owner: string;
  leaseMs: number;
  /** The jobs the runner is running under its lease. */
  runningIds: ReadonlySet<string>;
  isStarted: () => boolean;
  /** Puts the running jobs of dead owners back to pending; returns how many. */
  releaseAbandonedJobs?: ((now: Date) => Promise<number>) | undefined;
  /** Some were released: the runner claims them (and the participant's next jobs, which waited behind them). */
  onReleased: () => void;
}): LeaseHeartbeat {
  const { store, clock, log, owner, leaseMs, runningIds } = options;
  let timer: NodeJS.Timeout | undefined;

  function renewLeases(): void {
    if (runningIds.size === 0) return;
    const now = clock.now();
    store.jobs
      .renewLeases({ ids: [...runningIds], owner, leaseUntil: new Date(now.getTime() + leaseMs), now })
      .catch((error: unknown) => log.warn({ error: errorMessage(error) }, 'renewing job leases failed'));
  }

  function releaseAbandoned(): void {
    options
      .releaseAbandonedJobs?.(clock.now())
      .then((released) => {
        if (released === 0) return;
        log.info({ count: released }, 'jobs of a dead instance released');
        options.onReleased();
      })
      .catch((error: unknown) => log.warn({ error: errorMessage(error) }, 'releasing abandoned jobs failed'));
  }

  function stop(): void {
    clearInterval(timer);
    timer = undefined;
  }

  function beat(): void {
    const started = options.isStarted();
    if (!started && runningIds.size === 0) {
      stop();
      return;
    }
    if (started) releaseAbandoned();
    renewLeases();
  }

  return {
    start() {
      if (timer) return;
      timer = setInterval(beat, leaseRenewalIntervalMs(leaseMs));
      // The heartbeat never keeps a process alive on its own: a finished CLI command exits.
      timer.unref();
    },
    stop,
    releaseAbandoned,
  };
}
