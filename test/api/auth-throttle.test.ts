import { describe, expect, it } from 'vitest';
import { createAuthThrottle } from '../../src/api/auth-throttle.ts';

describe('the throttle of wrong tokens', () => {
  it('refuses an address from its 10th wrong token until 15 minutes after its first', () => {
    let now = 1_000_000;
    const throttle = createAuthThrottle({ now: () => now });
    for (let attempt = 1; attempt < 10; attempt += 1) {
      throttle.recordFailure('198.51.100.7');
      now += 60_000;
      expect(throttle.retryAfterSeconds('198.51.100.7')).toBe(0);
    }
    throttle.recordFailure('198.51.100.7');
    // The window started at the first failure, nine minutes ago: six minutes left, not fifteen.
    expect(throttle.retryAfterSeconds('198.51.100.7')).toBe(6 * 60);
    expect(throttle.retryAfterSeconds('198.51.100.8')).toBe(0);
    now += 6 * 60_000 - 1;
    expect(throttle.retryAfterSeconds('198.51.100.7')).toBe(1);
    now += 1;
    expect(throttle.retryAfterSeconds('198.51.100.7')).toBe(0);
    // A fresh window: one failure is not a block.
    throttle.recordFailure('198.51.100.7');
    expect(throttle.retryAfterSeconds('198.51.100.7')).toBe(0);
  });

  it('remembers at most maxAddresses addresses, forgetting the least recent first', () => {
    const throttle = createAuthThrottle({ maxFailures: 1, maxAddresses: 2, now: () => 0 });
    for (const address of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) throttle.recordFailure(address);
    expect(throttle.retryAfterSeconds('192.0.2.1')).toBe(0);
    expect(throttle.retryAfterSeconds('192.0.2.2')).toBeGreaterThan(0);
    expect(throttle.retryAfterSeconds('192.0.2.3')).toBeGreaterThan(0);
  });
});
