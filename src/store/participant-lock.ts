/**
 * Serialises work per participant: two turns, or a turn and a timer, for the same participant never interleave.
 * Different participants run concurrently. This in-process implementation is FIFO per key; the PostgreSQL
 * coordinator (`postgres/postgres-coordinator.ts`, advisory locks) implements the same port across instances.
 *
 * Re-entrant on request: work run with `{ reentrant: true }` may take the same lock again within its own
 * asynchronous flow (inbound processing holds the lock while it drains a participant's messages, and each turn takes
 * it too). Only for work that awaits everything it starts: anything it starts in the background would also pass
 * through the lock while it is held. After release, nothing passes through any more.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface LockOptions {
  /** Calls of `run` for the same participant inside `work` (same asynchronous flow) run at once instead of queueing. */
  reentrant?: boolean;
}

export interface ParticipantLock {
  /**
   * True when every holder of this lock is in this process (the in-process lock). That is the case exactly when one
   * process works on its database: without the coordinator's shared lock, two processes on one database would not
   * exclude each other at all (SQLite's state directory lock refuses a second one). The inbound pipeline relies on it
   * to know that no other process began a message it received itself. Absent on the coordinator's lock.
   */
  readonly processLocal?: true;
  run<T>(participantId: string, work: () => Promise<T>, options?: LockOptions): Promise<T>;
  /**
   * Runs `work` only if the lock is free right now (here and on every other instance); otherwise does nothing and
   * returns `{ acquired: false }`. For sweeps that must not queue behind a holder that will do the work anyway.
   */
  tryRun?<T>(
    participantId: string,
    work: () => Promise<T>,
    options?: LockOptions,
  ): Promise<{ acquired: boolean; value?: T }>;
}

interface HeldKey {
  readonly key: string;
  active: boolean;
}

export function createInProcessLock(): ParticipantLock {
  const tails = new Map<string, Promise<unknown>>();
  const held = new AsyncLocalStorage<readonly HeldKey[]>();
  return {
    processLocal: true,
    run<T>(participantId: string, work: () => Promise<T>, options: LockOptions = {}): Promise<T> {
      const current = held.getStore() ?? [];
      if (current.some((entry) => entry.active && entry.key === participantId)) return work();
      const locked = async (): Promise<T> => {
        if (!options.reentrant) return work();
        const token: HeldKey = { key: participantId, active: true };
        try {
          return await held.run([...current.filter((entry) => entry.active), token], work);
        } finally {
          token.active = false;
        }
      };
      const previous = tails.get(participantId) ?? Promise.resolve();
      const result = previous.then(locked, locked);
      // The chain must continue whether this work succeeds or fails, and the map entry must not grow forever.
      const tail = result.catch(() => undefined);
      tails.set(participantId, tail);
      void tail.then(() => {
        if (tails.get(participantId) === tail) tails.delete(participantId);
      });
      return result;
    },
  };
}
