/**
 * Waiting for background work in tests: polls `check` until it returns a truthy value (which is returned) or the
 * bound passes. A test never assumes that asynchronous work (a delivery, a metric, a transcript entry, a job) has
 * finished because a request returned: it waits for the condition it is about to assert.
 */
export interface WaitOptions {
  /** The bound; generous because the suite runs under load in CI. Default 10 s. */
  timeoutMs?: number;
  /** Pause between checks. Default 10 ms. */
  intervalMs?: number;
}

export async function waitUntil<T>(
  what: string,
  check: () => T | Promise<T>,
  options: WaitOptions = {},
): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 10));
  }
}
