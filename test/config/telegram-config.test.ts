import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

const TOKEN = '123456789:AAtelegram-config-token';
const TELEGRAM = {
  PROMPTPIPE_CHANNEL: 'telegram',
  TELEGRAM_BOT_TOKEN: TOKEN,
  TELEGRAM_WEBHOOK_SECRET: 'webhook-secret_1',
};

function problemsOf(environment: Record<string, string | undefined>): string {
  try {
    loadConfig(environment);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the configuration was accepted');
}

describe('telegram settings', () => {
  it('are read only when the channel is enabled, webhook mode and Telegram’s API by default', () => {
    expect(loadConfig({}).channel.telegram).toBeUndefined();
    expect(loadConfig(TELEGRAM).channel.telegram).toEqual({
      botToken: TOKEN,
      mode: 'webhook',
      webhookSecret: 'webhook-secret_1',
      apiUrl: 'https://api.telegram.org',
    });
    expect(
      loadConfig({
        PROMPTPIPE_CHANNEL: 'webhook,telegram',
        TELEGRAM_BOT_TOKEN: TOKEN,
        TELEGRAM_MODE: 'polling',
        TELEGRAM_API_URL: 'http://127.0.0.1:9999/',
      }).channel.telegram,
    ).toEqual({ botToken: TOKEN, mode: 'polling', webhookSecret: undefined, apiUrl: 'http://127.0.0.1:9999' });
  });

  it('names each problem without showing the token', () => {
    expect(problemsOf({ ...TELEGRAM, TELEGRAM_BOT_TOKEN: undefined })).toContain(
      'TELEGRAM_BOT_TOKEN is required when PROMPTPIPE_CHANNEL includes telegram',
    );
    const badToken = problemsOf({ ...TELEGRAM, TELEGRAM_BOT_TOKEN: 'not a bot token at all' });
    expect(badToken).toContain('TELEGRAM_BOT_TOKEN must look like');
    expect(badToken).not.toContain('not a bot token at all');
    expect(problemsOf({ ...TELEGRAM, TELEGRAM_WEBHOOK_SECRET: undefined })).toContain(
      'TELEGRAM_WEBHOOK_SECRET is required with TELEGRAM_MODE=webhook',
    );
    expect(problemsOf({ ...TELEGRAM, TELEGRAM_WEBHOOK_SECRET: 'has spaces in it' })).toContain(
      'TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z, a-z, 0-9, _ and -',
    );
    expect(problemsOf({ ...TELEGRAM, TELEGRAM_MODE: 'push' })).toContain(
      'TELEGRAM_MODE must be one of webhook, polling',
    );
    expect(problemsOf({ ...TELEGRAM, TELEGRAM_API_URL: 'not a url' })).toContain('TELEGRAM_API_URL must be a URL');
  });
});
