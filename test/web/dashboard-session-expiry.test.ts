/**
 * Dashboard sessions expire when idle (`DASHBOARD_SESSION_IDLE_TIMEOUT`), in process with an injected wall clock:
 * a real-process test would have to wait hours. The study clock is a different clock: moving a manual study clock
 * days forward signs nobody out.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Application } from '../../src/main.ts';
import { openEventStream } from '../support/event-stream-client.ts';
import { startTestApplication } from '../support/test-application.ts';
import { waitUntil } from '../support/wait-until.ts';

const TOKEN = 'session-expiry-token';
const HOUR = 3_600_000;
let app: Application;
let wallClock = Date.parse('2026-03-02T09:00:00Z');

function startApp(): Promise<Application> {
  return startTestApplication(
    { PROMPTPIPE_API_TOKEN: TOKEN, DASHBOARD_SESSION_IDLE_TIMEOUT: '8h' },
    { wallClock: () => wallClock, start: false },
  );
}

afterEach(async () => {
  await app?.stop();
});

async function signIn(): Promise<string> {
  const response = await app.server.inject({
    method: 'POST',
    url: '/dashboard/login',
    payload: `token=${TOKEN}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  expect(response.statusCode).toBe(303);
  return String(response.headers['set-cookie']).split(';')[0] ?? '';
}

const page = (cookie: string, url = '/dashboard') => app.server.inject({ method: 'GET', url, headers: { cookie } });
const csrfOf = (body: string): string => /name="csrf-token" content="([^"]+)"/.exec(body)?.[1] ?? '';

describe('dashboard session idle expiry', () => {
  it('keeps a session that is used, and signs out one left idle for the timeout', async () => {
    app = await startApp();
    await app.start();
    const cookie = await signIn();
    const csrf = csrfOf((await page(cookie)).body);
    for (let visit = 1; visit <= 3; visit += 1) {
      wallClock += 7 * HOUR;
      expect((await page(cookie)).statusCode).toBe(200);
    }

    wallClock += 8 * HOUR + 1;
    const expired = await page(cookie);
    expect(expired.statusCode).toBe(303);
    expect(expired.headers.location).toBe('/dashboard/login');
    // Treated as signed out everywhere: actions and the live transcript too.
    const action = await app.server.inject({
      method: 'POST',
      url: '/dashboard/enroll',
      payload: `phone_number=%2B15551230001&_csrf=${csrf}`,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(action.statusCode).toBe(403);
    expect(await app.store.participants.count()).toBe(0);
    expect((await page(cookie, '/dashboard/participants/conv_x/live')).statusCode).toBe(401);
  });

  it('does not count the manual study clock: a day forward keeps the staff signed in', async () => {
    app = await startApp();
    await app.start();
    const cookie = await signIn();
    const advanced = await app.server.inject({
      method: 'POST',
      url: '/dashboard/clock',
      payload: `advance=day&_csrf=${csrfOf((await page(cookie)).body)}`,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(advanced.statusCode).toBe(303);
    expect(app.clock.now().toISOString()).toBe('2026-03-03T14:00:00.000Z');
    expect((await page(cookie)).statusCode).toBe(200);
  });

  it('ends the live transcript stream of a session that expired while it was open', { timeout: 30_000 }, async () => {
    app = await startApp();
    await app.start({ listen: true });
    const address = app.server.addresses()[0];
    if (!address || typeof address === 'string') throw new Error('the server is not listening on a TCP port');
    const cookie = await signIn();
    const live = await openEventStream(`http://127.0.0.1:${address.port}/dashboard/participants/conv_x/live`, {
      cookie,
    });
    expect(live.status).toBe(200);
    try {
      wallClock += 8 * HOUR + 1;
      // No request announces an expiry: the stream notices it at its next check of the session.
      await waitUntil('the expired session’s stream to end', () => live.ended(), { timeoutMs: 20_000 });
    } finally {
      live.close();
    }
  });
});
