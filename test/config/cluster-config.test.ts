import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

describe('cluster settings', () => {
  it('leases a claimed job for 30 s unless PROMPTPIPE_JOB_LEASE says otherwise', () => {
    expect(loadConfig({}).cluster.jobLeaseMs).toBe(30_000);
    expect(loadConfig({ PROMPTPIPE_JOB_LEASE: '3s' }).cluster.jobLeaseMs).toBe(3_000);
    expect(loadConfig({ PROMPTPIPE_JOB_LEASE: '2m' }).cluster.jobLeaseMs).toBe(120_000);
  });

  it('refuses a lease too short for its heartbeat, or not a duration, naming the variable', () => {
    expect(() => loadConfig({ PROMPTPIPE_JOB_LEASE: '2s' })).toThrow(/PROMPTPIPE_JOB_LEASE must be at least 3s/);
    expect(() => loadConfig({ PROMPTPIPE_JOB_LEASE: 'soon' })).toThrow(/PROMPTPIPE_JOB_LEASE must be a duration/);
    expect(() => loadConfig({ PROMPTPIPE_JOB_LEASE: '0s' })).toThrow(
      /PROMPTPIPE_JOB_LEASE must be a positive duration/,
    );
  });
});
