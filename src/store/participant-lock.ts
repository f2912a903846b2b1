/**
 * Serialises work per participant: two turns, or a turn and a timer, for the same participant never interleave.
 * Different participants run concurrently. This in-process implementation is FIFO per key; a database-level lock
 * (PostgreSQL advisory locks, for several server instances) implements the same port.
 */
export interface ParticipantLock {
  run<T>(participantId: string, work: () => Promise<T>): Promise<T>;
}

export function createInProcessLock(): ParticipantLock {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run<T>(participantId: string, work: () => Promise<T>): Promise<T> {
      const previous = tails.get(participantId) ?? Promise.resolve();
      const result = previous.then(work, work);
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
