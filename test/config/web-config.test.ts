import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

describe('PROMPTPIPE_PUBLIC_URL', () => {
  it('is unset by default and kept without trailing slashes when set', () => {
    expect(loadConfig({}).publicUrl).toBeUndefined();
    expect(loadConfig({ PROMPTPIPE_PUBLIC_URL: 'https://coach.example.org/' }).publicUrl).toBe(
      'https://coach.example.org',
    );
    expect(loadConfig({ PROMPTPIPE_PUBLIC_URL: 'http://10.0.0.5:8080/study//' }).publicUrl).toBe(
      'http://10.0.0.5:8080/study',
    );
  });

  it.each([
    ['coach.example.org', /must be an absolute URL/],
    ['/chat', /must be an absolute URL/],
    ['ftp://coach.example.org', /must start with https:\/\/ or http:\/\//],
    ['https://coach.example.org/?study=1', /without query, fragment or credentials/],
    ['https://user:secret@coach.example.org', /without query, fragment or credentials/],
  ])('refuses %s, naming the variable', (value, problem) => {
    expect(() => loadConfig({ PROMPTPIPE_PUBLIC_URL: value })).toThrow(/PROMPTPIPE_PUBLIC_URL/);
    expect(() => loadConfig({ PROMPTPIPE_PUBLIC_URL: value })).toThrow(problem);
  });
});

describe('DASHBOARD_SESSION_IDLE_TIMEOUT', () => {
  it('defaults to 8 hours and reads durations like the other settings', () => {
    expect(loadConfig({}).dashboard.sessionIdleTimeoutMs).toBe(8 * 3_600_000);
    expect(loadConfig({ DASHBOARD_SESSION_IDLE_TIMEOUT: '1h30m' }).dashboard.sessionIdleTimeoutMs).toBe(5_400_000);
  });

  it.each(['soon', '0', '0s'])('refuses %s', (value) => {
    expect(() => loadConfig({ DASHBOARD_SESSION_IDLE_TIMEOUT: value })).toThrow(
      /DASHBOARD_SESSION_IDLE_TIMEOUT must be/,
    );
  });
});
