/**
 * Out of process, against the real `promptpipe serve`: the first admin is created by signing in with the API token,
 * invites a viewer, and the viewer — through the dashboard's pages and a personal API token — never receives the
 * participant's phone number or name. Sessions live in the database: the viewer is still signed in after a restart,
 * and the admin's audit page lists what happened.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServer, stopServer } from '../support/server-process.ts';

const API_TOKEN = 'staff-e2e-api-token';
const PHONE = '+15557654321';
const PASSWORD = 'a long admin passphrase';
let server: ServerProcess | undefined;
let stateDir = '';

afterAll(async () => {
  if (server && !server.exited) await stopServer(server);
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 30_000);

async function serve(): Promise<ServerProcess> {
  return startServer({
    PATH: process.env.PATH ?? '',
    PROMPTPIPE_STATE_DIR: stateDir,
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    PROMPTPIPE_PUBLIC_URL: '',
    LOG_LEVEL: 'info',
  });
}

const cookieOf = (response: Response): string => (response.headers.getSetCookie().at(-1) ?? '').split(';')[0] ?? '';
const csrfOf = (page: string): string => /name="csrf-token" content="([^"]+)"/.exec(page)?.[1] ?? '';
const formPost = (url: string, cookie: string, values: Record<string, string>) =>
  fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(values).toString(),
  });
const page = async (url: string, cookie: string) => fetch(url, { headers: { cookie }, redirect: 'manual' });

describe('staff accounts against the real server', () => {
  it('creates the first admin from the API token, invites a viewer who never sees a phone number, across a restart', async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-staff-'));
    server = await serve();
    const base = server.baseUrl;
    const enrolled = await fetch(`${base}/conversation/participants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ phone_number: PHONE, name: 'Grace Hopper' }),
    });
    expect(enrolled.status).toBe(201);
    const participantId = ((await enrolled.json()) as { result: { id: string } }).result.id;

    const tokenSession = cookieOf(await formPost(`${base}/dashboard/login`, '', { token: API_TOKEN }));
    const users = await (await page(`${base}/dashboard/users`, tokenSession)).text();
    expect(users).toContain('Create the first admin');
    const created = await formPost(`${base}/dashboard/users/first-admin`, tokenSession, {
      _csrf: csrfOf(users),
      email: 'pi@study.example',
      display_name: 'PI',
      password: PASSWORD,
    });
    expect(created.status).toBe(200);
    const admin = cookieOf(created);
    const adminPage = await (await page(`${base}/dashboard/users`, admin)).text();
    const invited = await formPost(`${base}/dashboard/users/invite`, admin, {
      _csrf: csrfOf(adminPage),
      email: 'viewer@study.example',
      display_name: 'Viewer',
      role: 'viewer',
    });
    const link = /<code id="secret">([^<]+)<\/code>/.exec(await invited.text())?.[1] ?? '';
    expect(link).toContain('/dashboard/invite/');
    const accepted = await formPost(link, '', { password: 'a separate long passphrase' });
    expect(accepted.status).toBe(303);
    const viewer = cookieOf(accepted);

    const tokensPage = await (await page(`${base}/dashboard/tokens`, viewer)).text();
    const issued = await formPost(`${base}/dashboard/tokens`, viewer, {
      _csrf: csrfOf(tokensPage),
      name: 'notebook',
      scope: 'read',
    });
    const viewerToken = /<code id="secret">([^<]+)<\/code>/.exec(await issued.text())?.[1] ?? '';
    expect(viewerToken).toMatch(/^pp_/);

    const viewerSees = async (): Promise<string[]> => [
      await (await page(`${base}/dashboard`, viewer)).text(),
      await (await page(`${base}/dashboard/participants/${participantId}`, viewer)).text(),
      await (
        await fetch(`${base}/conversation/participants`, { headers: { authorization: `Bearer ${viewerToken}` } })
      ).text(),
    ];
    for (const body of await viewerSees()) {
      expect(body).not.toContain(PHONE);
      expect(body).not.toContain('5557654321');
      expect(body).not.toContain('Grace Hopper');
    }
    const listed = (await viewerSees())[2] ?? '';
    expect(listed).toContain('+1555•••4321');

    // Sessions are rows in the database: a restart keeps everyone signed in.
    await stopServer(server);
    server = await serve();
    const after = await page(`${server.baseUrl}/dashboard`, viewer);
    expect(after.status).toBe(200);
    const audit = await (await page(`${server.baseUrl}/dashboard/audit`, admin)).text();
    expect(audit).toContain('sign-in');
    expect(audit).toContain('POST /dashboard/users/invite');
    const refused = await page(`${server.baseUrl}/dashboard/audit`, viewer);
    expect(refused.status).toBe(403);
  }, 90_000);
});
