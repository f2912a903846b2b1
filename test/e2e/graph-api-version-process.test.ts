/**
 * The real `promptpipe serve` on the WhatsApp Cloud API with a Graph API version Meta retires within 90 days (v21.0,
 * until 21 January 2027): it starts, and warns at start-up naming the version, its end date and the setting to change,
 * without printing any configured secret (`stopServer` checks the output).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServer, stopServer } from '../support/server-process.ts';

const ACCESS_TOKEN = 'EAAG-e2e-graph-version';
const APP_SECRET = 'e2e-graph-version-app-secret';
const VERIFY_TOKEN = 'e2e-graph-version-verify';
const PHONE_NUMBER_ID = '1098765434';

describe('promptpipe serve with an old Graph API version', () => {
  it('warns at start-up about a Graph API version Meta retires within 90 days, without any secret', {
    timeout: 60_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'promptpipe-graph-version-'));
    try {
      const started = await startServer({
        PATH: process.env.PATH ?? '',
        PROMPTPIPE_STATE_DIR: dir,
        LOG_LEVEL: 'warn',
        PROMPTPIPE_CHANNEL: 'whatsapp-cloud',
        WHATSAPP_CLOUD_ACCESS_TOKEN: ACCESS_TOKEN,
        WHATSAPP_CLOUD_PHONE_NUMBER_ID: PHONE_NUMBER_ID,
        WHATSAPP_CLOUD_APP_SECRET: APP_SECRET,
        WHATSAPP_CLOUD_VERIFY_TOKEN: VERIFY_TOKEN,
        WHATSAPP_CLOUD_API_URL: 'https://graph.facebook.com/v21.0',
      });
      // Meta serves v21.0 until 21 January 2027: within 90 days of it (or past it) whenever this runs now.
      expect(await stopServer(started)).toEqual({ code: 0, signal: null });
      expect(started.output.join('')).toMatch(/Graph API v21\.0 (is|was) retired by Meta on 2027-01-21/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
