/**
 * Out of process, against the real `promptpipe serve`: wrong API tokens and wrong dashboard sign-ins are throttled
 * per client address (one budget for both, since both take the API token), and the dashboard's session cookie is
 * `Secure` when the configured public URL is https. Requests come from different loopback addresses (127.0.0.2,
 * 127.0.0.3…) so that one server can tell the clients apart.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_AUTH_THROTTLE } from '../../src/api/auth-throttle.ts';
import { requestFrom } from '../support/event-stream-client.ts';
import { type ServerProcess, startServer, stopServer } from '../support/server-process.ts';

const API_TOKEN = 'throttle-e2e-token';
const WINDOW_SECONDS = DEFAULT_AUTH_THROTTLE.windowMs / 1000;
const started: { server: ServerProcess; stateDir: string }[] = [];

async function serve(environment: Record<string, string>): Promise<ServerProcess> {
  const stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-throttle-'));
  const server = await startServer({
    PATH: process.env.PATH ?? '',
    PROMPTPIPE_STATE_DIR: stateDir,
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    // Blank, so that a local .env cannot change what is tested.
    PROMPTPIPE_PUBLIC_URL: '',
    LOG_LEVEL: 'warn',
    ...environment,
  });
  started.push({ server, stateDir });
  return server;
}

afterAll(async () => {
  for (const { server, stateDir } of started) {
    await stopServer(server);
    await rm(stateDir, { recursive: true, force: true });
  }
}, 30_000);

const listParticipants = (server: ServerProcess, from: string, token: string) =>
  requestFrom(from, `${server.baseUrl}/conversation/participants`, { headers: { authorization: `Bearer ${token}` } });

const signIn = (server: ServerProcess, from: string, token: string) =>
  requestFrom(from, `${server.baseUrl}/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
  });

function expectRefusedForAWhile(response: { status: number; headers: Record<string, unknown> }): void {
  expect(response.status).toBe(429);
  const retryAfter = Number(response.headers['retry-after']);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
}

describe('throttling wrong tokens per client address', () => {
  it('answers 429 after 10 wrong API tokens, to that address only', { timeout: 60_000 }, async () => {
    const server = await serve({});
    for (let attempt = 1; attempt <= DEFAULT_AUTH_THROTTLE.maxFailures; attempt += 1) {
      expect((await listParticipants(server, '127.0.0.2', `guess-${attempt}`)).status).toBe(401);
    }
    const refused = await listParticipants(server, '127.0.0.2', 'guess-11');
    expectRefusedForAWhile(refused);
    expect(JSON.parse(refused.body)).toMatchObject({ status: 'error', message: expect.stringMatching(/too many/) });
    // While refused, the right token is not even checked: otherwise guessing would go on, answered by 401 or 200.
    expectRefusedForAWhile(await listParticipants(server, '127.0.0.2', API_TOKEN));
    // The dashboard's sign-in takes the same token, so it shares the budget.
    expectRefusedForAWhile(await signIn(server, '127.0.0.2', API_TOKEN));

    // Another address with the right token is not affected; a missing header is no guess and is not counted.
    expect((await listParticipants(server, '127.0.0.1', API_TOKEN)).status).toBe(200);
    for (let attempt = 1; attempt <= DEFAULT_AUTH_THROTTLE.maxFailures + 2; attempt += 1) {
      expect((await requestFrom('127.0.0.4', `${server.baseUrl}/conversation/participants`)).status).toBe(401);
    }
    expect((await listParticipants(server, '127.0.0.4', API_TOKEN)).status).toBe(200);
  });

  it('answers 429 after 10 wrong dashboard sign-ins, also to the API', { timeout: 60_000 }, async () => {
    const server = started[0]?.server ?? (await serve({}));
    for (let attempt = 1; attempt <= DEFAULT_AUTH_THROTTLE.maxFailures; attempt += 1) {
      const wrong = await signIn(server, '127.0.0.3', `guess-${attempt}`);
      expect(wrong.status).toBe(401);
      expect(wrong.headers['set-cookie']).toBeUndefined();
    }
    const refused = await signIn(server, '127.0.0.3', API_TOKEN);
    expectRefusedForAWhile(refused);
    expect(refused.body).toContain('Too many wrong tokens');
    expect(refused.headers['set-cookie']).toBeUndefined();
    expectRefusedForAWhile(await listParticipants(server, '127.0.0.3', API_TOKEN));
    expect((await signIn(server, '127.0.0.1', API_TOKEN)).status).toBe(303);
  });
});

describe('the session cookie', () => {
  it('is Secure when PROMPTPIPE_PUBLIC_URL is https, and not over plain HTTP without it', {
    timeout: 60_000,
  }, async () => {
    const plain = started[0]?.server ?? (await serve({}));
    const plainCookie = String((await signIn(plain, '127.0.0.1', API_TOKEN)).headers['set-cookie']);
    expect(plainCookie).toMatch(/^promptpipe_session=[^;]+;/);
    expect(plainCookie.split('; ').slice(1).sort()).toEqual(['HttpOnly', 'Path=/', 'SameSite=Strict']);
    expect(plainCookie).not.toMatch(/Secure/);

    const behindHttps = await serve({ PROMPTPIPE_PUBLIC_URL: 'https://coach.example.org' });
    const signedIn = await signIn(behindHttps, '127.0.0.1', API_TOKEN);
    expect(signedIn.status).toBe(303);
    const attributes = (setCookie: unknown) => String(setCookie).split('; ').slice(1).sort();
    expect(attributes(signedIn.headers['set-cookie'])).toEqual(['HttpOnly', 'Path=/', 'SameSite=Strict', 'Secure']);
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0] ?? '';
    const page = await requestFrom('127.0.0.1', `${behindHttps.baseUrl}/dashboard`, { headers: { cookie } });
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const signedOut = await requestFrom('127.0.0.1', `${behindHttps.baseUrl}/dashboard/logout`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `_csrf=${csrf}`,
    });
    expect(signedOut.status).toBe(303);
    // The cookie that clears it has the same attributes, or a browser would keep the Secure one.
    expect(attributes(signedOut.headers['set-cookie'])).toEqual([
      'Expires=Thu, 01 Jan 1970 00:00:00 GMT',
      'HttpOnly',
      'Max-Age=0',
      'Path=/',
      'SameSite=Strict',
      'Secure',
    ]);
  });
});
