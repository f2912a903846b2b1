/**
 * The clock port. Everything in the core reads time from here, never from `Date.now()`; the system and manual clocks
 * are in scheduling/clock.ts.
 */
export interface Clock {
  now(): Date;
}
