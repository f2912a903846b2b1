/**
 * Staff accounts end to end in process: lockout, token revocation and expiry, deactivation, sign-out everywhere,
 * CSRF on the account pages, the first admin from the API token, and that no password or token is kept or logged
 * in clear.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Application } from '../../src/main.ts';
import { createStaffService, LOCKOUT } from '../../src/staff/staff-service.ts';
import {
  API_TOKEN,
  cookieOf,
  csrfOf,
  PASSWORD,
  signIn,
  staffPerRole,
  startStaffApp,
  useWallClock,
} from './staff-harness.ts';

let app: Application | undefined;
let wallClock = Date.parse('2026-03-02T09:00:00Z');
const MINUTE = 60_000;

afterEach(async () => {
  await app?.stop();
  app = undefined;
});

async function start(logLines?: string[], filename?: string): Promise<Application> {
  wallClock = Date.parse('2026-03-02T09:00:00Z');
  useWallClock(() => wallClock);
  app = await startStaffApp({
    wallClock: () => wallClock,
    ...(logLines ? { logLines } : {}),
    ...(filename ? { filename } : {}),
  });
  return app;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const form = (values: Record<string, string>) => new URLSearchParams(values).toString();
const formHeaders = (cookie: string) => ({ cookie, 'content-type': 'application/x-www-form-urlencoded' });

describe('sign-in', () => {
  it(`locks an account after ${LOCKOUT.maxFailures} wrong passwords, refuses even the right one meanwhile, and records each attempt`, async () => {
    const server = await start();
    await createStaffService({ staff: server.store.staff, now: () => new Date(wallClock) }).createWithPassword({
      email: 'coordinator@study.example',
      displayName: 'Coordinator',
      role: 'coordinator',
      password: PASSWORD,
    });
    for (let attempt = 1; attempt < LOCKOUT.maxFailures; attempt += 1) {
      expect((await signIn(server, 'coordinator@study.example', 'wrong password!')).statusCode).toBe(401);
    }
    expect((await signIn(server, 'coordinator@study.example', 'wrong password!')).statusCode).toBe(423);
    const refused = await signIn(server, 'coordinator@study.example');
    expect(refused.statusCode).toBe(423);
    expect(refused.body).toContain('locked');

    wallClock += LOCKOUT.lockMs + MINUTE;
    expect((await signIn(server, 'coordinator@study.example')).statusCode).toBe(303);
    const rows = await server.store.audit.list({ action: 'sign-in' }, 100);
    expect(rows).toHaveLength(LOCKOUT.maxFailures + 2);
    expect(rows.filter((row) => row.outcome === 'denied')).toHaveLength(LOCKOUT.maxFailures + 1);
    expect(rows[0]).toMatchObject({ outcome: 'success', actor: 'coordinator@study.example', address: '127.0.0.1' });
  });

  it('lets the API token create the first admin, who is then signed in with their own account', async () => {
    const server = await start();
    const signedIn = await server.server.inject({
      method: 'POST',
      url: '/dashboard/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ token: API_TOKEN }),
    });
    expect(signedIn.statusCode).toBe(303);
    const cookie = cookieOf(signedIn.headers['set-cookie']);
    const users = await server.server.inject({ method: 'GET', url: '/dashboard/users', headers: { cookie } });
    expect(users.body).toContain('Create the first admin');
    const created = await server.server.inject({
      method: 'POST',
      url: '/dashboard/users/first-admin',
      headers: formHeaders(cookie),
      payload: form({ _csrf: csrfOf(users.body), email: 'pi@study.example', display_name: 'PI', password: PASSWORD }),
    });
    expect(created.statusCode).toBe(200);
    expect(created.body).toContain('pi@study.example');
    // One Set-Cookie: the new session's cookie replaces the API token session's.
    const adminCookie = cookieOf([created.headers['set-cookie']].flat().at(-1));
    const again = await server.server.inject({
      method: 'GET',
      url: '/dashboard/users',
      headers: { cookie: adminCookie },
    });
    expect(again.statusCode).toBe(200);
    expect(again.body).not.toContain('Create the first admin');
    // The API token's session ended when the admin's began.
    expect((await server.server.inject({ method: 'GET', url: '/dashboard', headers: { cookie } })).statusCode).toBe(
      303,
    );
  });
});

describe('tokens and sessions', () => {
  it('stops a revoked token and an expired one at once, and refuses the account pages without the CSRF token', async () => {
    const server = await start();
    const { coordinator } = await staffPerRole(server);
    const list = () =>
      server.server.inject({ method: 'GET', url: '/conversation/participants', headers: bearer(coordinator.token) });
    expect((await list()).statusCode).toBe(200);

    const tokenId = /^pp_([a-z0-9]+)_/.exec(coordinator.token)?.[1] ?? '';
    const noCsrf = await server.server.inject({
      method: 'POST',
      url: `/dashboard/tokens/${tokenId}/revoke`,
      headers: formHeaders(coordinator.cookie),
      payload: '',
    });
    expect(noCsrf.statusCode).toBe(403);
    expect((await list()).statusCode).toBe(200);
    const revoked = await server.server.inject({
      method: 'POST',
      url: `/dashboard/tokens/${tokenId}/revoke`,
      headers: formHeaders(coordinator.cookie),
      payload: form({ _csrf: coordinator.csrf }),
    });
    expect(revoked.statusCode).toBe(303);
    expect((await list()).statusCode).toBe(401);

    const accounts = createStaffService({ staff: server.store.staff, now: () => new Date(wallClock) });
    const { token } = await accounts.createToken({
      userId: coordinator.userId,
      name: 'short-lived',
      scope: 'read',
      expiresAt: new Date(wallClock + 10 * MINUTE),
    });
    const read = () =>
      server.server.inject({ method: 'GET', url: '/conversation/participants', headers: bearer(token) });
    expect((await read()).statusCode).toBe(200);
    wallClock += 10 * MINUTE;
    expect((await read()).statusCode).toBe(401);
  });

  it('ends every session and token of a deactivated account at once, and signs out everywhere', async () => {
    const server = await start();
    const { admin, viewer, researcher } = await staffPerRole(server);
    const second = cookieOf((await signIn(server, researcher.email)).headers['set-cookie']);
    const page = (cookie: string) =>
      server.server.inject({ method: 'GET', url: '/dashboard/tokens', headers: { cookie } });
    expect((await page(second)).statusCode).toBe(200);
    const everywhere = await server.server.inject({
      method: 'POST',
      url: '/dashboard/logout-everywhere',
      headers: formHeaders(researcher.cookie),
      payload: form({ _csrf: researcher.csrf }),
    });
    expect(everywhere.statusCode).toBe(303);
    expect((await page(researcher.cookie)).statusCode).toBe(303);
    expect((await page(second)).statusCode).toBe(303);

    const deactivated = await server.server.inject({
      method: 'POST',
      url: `/dashboard/users/${viewer.userId}/deactivate`,
      headers: formHeaders(admin.cookie),
      payload: form({ _csrf: admin.csrf }),
    });
    expect(deactivated.statusCode).toBe(303);
    expect((await page(viewer.cookie)).statusCode).toBe(303);
    const api = await server.server.inject({
      method: 'GET',
      url: '/conversation/participants',
      headers: bearer(viewer.token),
    });
    expect(api.statusCode).toBe(401);
    expect((await signIn(server, viewer.email)).statusCode).toBe(401);
    const [row] = await server.store.audit.list({ action: 'deactivate' }, 10);
    expect(row).toMatchObject({
      actor: admin.email,
      outcome: 'success',
      detail: JSON.stringify({ id: viewer.userId }),
    });
  });
});

describe('secrets', () => {
  it('keeps no password, token, session id or invitation secret in clear in the database or the logs', async () => {
    const logLines: string[] = [];
    const databaseFile = join(mkdtempSync(join(tmpdir(), 'staff-secrets-')), 'promptpipe.db');
    const server = await start(logLines, databaseFile);
    const { admin } = await staffPerRole(server);
    const invited = await server.server.inject({
      method: 'POST',
      url: '/dashboard/users/invite',
      headers: formHeaders(admin.cookie),
      payload: form({ _csrf: admin.csrf, email: 'new@study.example', display_name: 'New', role: 'viewer' }),
    });
    expect(invited.statusCode).toBe(200);
    const link = /<code id="secret">([^<]+)<\/code>/.exec(invited.body)?.[1] ?? '';
    const inviteSecret = link.split('/').at(-1) ?? '';
    expect(inviteSecret.length).toBeGreaterThan(20);
    const accepted = await server.server.inject({
      method: 'POST',
      url: `/dashboard/invite/${inviteSecret}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ password: 'another fine passphrase' }),
    });
    expect(accepted.statusCode).toBe(303);
    // Used once: the link opens nothing any more.
    expect((await server.server.inject({ method: 'GET', url: `/dashboard/invite/${inviteSecret}` })).statusCode).toBe(
      404,
    );

    await server.store.durable();
    const files = [databaseFile, `${databaseFile}-wal`].filter((file) => existsSync(file));
    const databaseBytes = files.map((file) => readFileSync(file).toString('latin1'));
    const everything = [
      JSON.stringify(await server.store.staff.listUsers()),
      JSON.stringify(await server.store.staff.listTokens()),
      JSON.stringify(await server.store.audit.list({}, 1000)),
      ...databaseBytes,
      logLines.join('\n'),
    ].join('\n');
    const sessionId = admin.cookie.split('=')[1] ?? '';
    for (const secret of [PASSWORD, 'another fine passphrase', admin.token, inviteSecret, sessionId, API_TOKEN]) {
      expect(everything).not.toContain(secret);
    }
    expect(logLines.length).toBeGreaterThan(0);
    expect(databaseBytes.join('')).toContain('new@study.example');
  });
});
