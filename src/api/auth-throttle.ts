/**
 * Throttles guesses of the API token, per client address: the bearer token of the API and the dashboard's sign-in
 * form (which takes the same token) count together. An address that presented `maxFailures` wrong tokens within
 * `windowMs` of its first one is refused (429 with `Retry-After`) until that window has passed, whatever it
 * presents meanwhile — a correct token included, or the throttle would still answer every guess. Other addresses are
 * not affected, and correct tokens are never counted, so busy API clients pay nothing.
 *
 * In memory, per instance: an LRU cache of at most `maxAddresses` addresses (lru-cache, each entry expiring with its
 * window), so a flood of addresses cannot grow it without bound; the oldest address is forgotten first. Time is the
 * wall clock (`now`), never the study clock: moving a manual study clock must not lift or extend a block.
 *
 * The address is Fastify's `request.ip`: the socket's peer. Behind a reverse proxy that is the proxy, so every client
 * shares one budget (Fastify's `trustProxy` is not enabled).
 */
import { LRUCache } from 'lru-cache';

export interface AuthThrottle {
  /** Whole seconds until `address` may present a token again; 0 when it may now. */
  retryAfterSeconds(address: string): number;
  /** Counts a wrong token presented from `address`. */
  recordFailure(address: string): void;
}

export interface AuthThrottleOptions {
  /** Wrong tokens an address may present within one window (default 10). */
  maxFailures?: number;
  /** The window, from an address's first wrong token (default 15 minutes). */
  windowMs?: number;
  /** Addresses remembered at once (default 10,000). */
  maxAddresses?: number;
  /** Wall-clock milliseconds (default `Date.now`). */
  now?: () => number;
}

export const DEFAULT_AUTH_THROTTLE = { maxFailures: 10, windowMs: 15 * 60_000, maxAddresses: 10_000 } as const;

export function createAuthThrottle(options: AuthThrottleOptions = {}): AuthThrottle {
  const maxFailures = options.maxFailures ?? DEFAULT_AUTH_THROTTLE.maxFailures;
  const failures = new LRUCache<string, { count: number }>({
    max: options.maxAddresses ?? DEFAULT_AUTH_THROTTLE.maxAddresses,
    ttl: options.windowMs ?? DEFAULT_AUTH_THROTTLE.windowMs,
    // The window runs from the first failure: later failures neither restart nor lengthen it.
    noUpdateTTL: true,
    // Exact expiry against `now` (the default caches the time for a millisecond).
    ttlResolution: 0,
    perf: { now: options.now ?? Date.now },
  });
  return {
    retryAfterSeconds(address) {
      const entry = failures.get(address);
      if (!entry || entry.count < maxFailures) return 0;
      const remainingMs = failures.getRemainingTTL(address);
      return remainingMs > 0 ? Math.ceil(remainingMs / 1000) : 0;
    },
    recordFailure(address) {
      const entry = failures.get(address);
      if (entry) entry.count += 1;
      else failures.set(address, { count: 1 });
    },
  };
}
