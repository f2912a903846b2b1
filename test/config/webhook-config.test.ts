import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

describe('PROMPTPIPE_WEBHOOK_TOLERANCE', () => {
  it('defaults to 5 minutes and reads a duration', () => {
    expect(loadConfig({}).channel.webhookToleranceMs).toBe(5 * 60_000);
    expect(loadConfig({ PROMPTPIPE_WEBHOOK_TOLERANCE: '1h' }).channel.webhookToleranceMs).toBe(60 * 60_000);
  });

  it.each(['soon', '0', '-5m'])('refuses %s at start-up, naming the variable', (value) => {
    expect(() => loadConfig({ PROMPTPIPE_WEBHOOK_TOLERANCE: value })).toThrow(/PROMPTPIPE_WEBHOOK_TOLERANCE must be/);
  });
});
