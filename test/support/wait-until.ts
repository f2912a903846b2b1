/**
 * Waiting for background work in tests, the one way: polls `check` until it returns a truthy value (which is
 * returned) or the bound passes. A test never assumes that asynchronous work (a delivery, a metric, a transcript
 * entry, a job) has finished because a request returned: it waits for the condition it is about to assert.
 *
 * `server-process.ts`'s `waitFor` is this with a server process's death as a reason to stop early.
 */
export interface WaitOptions {
  /** The bound; generous because the suite runs under load in CI. Default 10 s. */
  timeoutMs?: number;
  /** Pause between checks. Default 10 ms. */
  intervalMs?: number;
  /**
   * Asked before each pause: an error to fail with at once rather than wait out the bound (a server process that
   * exited will never make the condition true). A check that throws is rethrown, unless this has an error to give.
   */
  stopIf?: () => Error | undefined;
  /** More to say when the wait fails (a server's output, what arrived instead). */
  details?: () => string;
}

export async function waitUntil<T>(
  what: string,
  check: () => T | Promise<T>,
  options: WaitOptions = {},
): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  const failure = (message: string): Error => {
    const details = options.details?.();
    return new Error(details ? `${message}\n${details}` : message);
  };
  for (;;) {
    let value: T;
    try {
      value = await check();
    } catch (error) {
      const stopped = options.stopIf?.();
      if (stopped) throw stopped;
      throw error;
    }
    if (value) return value as NonNullable<T>;
    const stopped = options.stopIf?.();
    if (stopped) throw stopped;
    if (Date.now() > deadline) throw failure(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 10));
  }
}
