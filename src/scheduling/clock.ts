/** The clocks behind the `Clock` port (domain/clock.ts): the system clock and the manual one. */
import type { Clock } from '../domain/clock.ts';

export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told: tests and `PROMPTPIPE_CLOCK=manual`. */
export interface ManualClock extends Clock {
  readonly kind: 'manual';
  set(instant: Date): void;
  advance(milliseconds: number): void;
}

export function createManualClock(start: Date): ManualClock {
  let current = new Date(start.getTime());
  return {
    kind: 'manual',
    now: () => new Date(current.getTime()),
    set(instant) {
      current = new Date(instant.getTime());
    },
    advance(milliseconds) {
      current = new Date(current.getTime() + milliseconds);
    },
  };
}

export function isManualClock(clock: Clock): clock is ManualClock {
  return (clock as Partial<ManualClock>).kind === 'manual';
}
