/**
 * Out of process, against the real `promptpipe serve` with the web-chat channel: a chat link lives only as long as
 * its participant and its token, and a live stream only as long as the credential that opened it. Deleting through
 * the API, revoking on the dashboard and signing out each end the streams already open (they would otherwise keep
 * receiving the next messages), and the pages carry their security headers.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventStreamClient, openEventStream } from '../support/event-stream-client.ts';
import { type ServerProcess, startServer, stopServer, waitFor } from '../support/server-process.ts';

const API_TOKEN = 'revocation-e2e-token';
let server: ServerProcess;
let stateDir = '';
const streams: EventStreamClient[] = [];

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-revocation-'));
  server = await startServer({
    PATH: process.env.PATH ?? '',
    PROMPTPIPE_STATE_DIR: stateDir,
    PROMPTPIPE_CHANNEL: 'webchat',
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: '2026-03-02T14:00:00Z',
    // Blank, so that a local .env cannot change what is tested: no model (greetings fail, which is fine), no proxy URL.
    OPENAI_API_KEY: '',
    OPENAI_BASE_URL: '',
    PROMPTPIPE_PUBLIC_URL: '',
    LOG_LEVEL: 'warn',
  });
}, 60_000);

afterAll(async () => {
  for (const stream of streams) stream.close();
  if (server) await stopServer(server);
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 30_000);

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${API_TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

async function enroll(phone: string): Promise<{ id: string; chatUrl: string }> {
  const response = await api('POST', '/conversation/participants', { phone_number: phone, name: 'Ada' });
  expect(response.status).toBe(201);
  const { result } = (await response.json()) as { result: { id: string; chat_url: string } };
  return { id: result.id, chatUrl: result.chat_url };
}

async function stream(path: string, headers: Record<string, string> = {}): Promise<EventStreamClient> {
  const opened = await openEventStream(`${server.baseUrl}${path}`, headers);
  streams.push(opened);
  expect(opened.status).toBe(200);
  return opened;
}

/** An organiser message reaches the open stream: it is live before the credential goes. */
async function expectLive(participantId: string, opened: EventStreamClient, text: string): Promise<void> {
  expect((await api('POST', `/conversation/participants/${participantId}/messages`, { text })).status).toBe(202);
  await waitFor(`"${text}" on the open stream`, () => opened.received().includes(text), 15_000, [server]);
}

const endOf = (opened: EventStreamClient, what: string) =>
  waitFor(`the server to end the stream ${what}`, () => opened.ended(), 15_000, [server]);

const status = async (path: string, init: RequestInit = {}) => (await fetch(`${server.baseUrl}${path}`, init)).status;

async function signIn(): Promise<{ cookie: string; csrfOf: (path: string) => Promise<string> }> {
  const response = await fetch(`${server.baseUrl}/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `token=${API_TOKEN}`,
    redirect: 'manual',
  });
  expect(response.status).toBe(303);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const csrfOf = async (path: string) => {
    const page = await (await fetch(`${server.baseUrl}${path}`, { headers: { cookie } })).text();
    return /name="csrf-token" content="([^"]+)"/.exec(page)?.[1] ?? '';
  };
  return { cookie, csrfOf };
}

const post = (path: string, cookie: string, form: Record<string, string>) =>
  fetch(`${server.baseUrl}${path}`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });

describe('web-chat links and live streams end with their credential', () => {
  it('deleting through the API ends the open chat stream, and the link answers 404', { timeout: 60_000 }, async () => {
    const ada = await enroll('+15551230001');
    const chat = await stream(`${ada.chatUrl}/live?after=0`);
    await expectLive(ada.id, chat, 'before the deletion');

    expect((await api('DELETE', `/conversation/participants/${ada.id}`)).status).toBe(200);
    await endOf(chat, 'after the API deleted its participant');
    expect(await status(ada.chatUrl)).toBe(404);
    expect(await status(`${ada.chatUrl}/live?after=0`)).toBe(404);
    const send = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"hi"}' };
    expect(await status(`${ada.chatUrl}/messages`, send)).toBe(404);
    // The kept transcript is still there for the study team, only the link is gone.
    expect((await api('GET', `/conversation/participants/${ada.id}/history`)).status).toBe(200);
  });

  it('revoking the link on the dashboard ends the open chat stream; the new link works', {
    timeout: 60_000,
  }, async () => {
    const bo = await enroll('+15551230002');
    const chat = await stream(`${bo.chatUrl}/live?after=0`);
    await expectLive(bo.id, chat, 'before the revocation');
    const { cookie, csrfOf } = await signIn();
    const csrf = await csrfOf(`/dashboard/participants/${bo.id}`);

    expect((await post(`/dashboard/participants/${bo.id}/chat-link`, cookie, { _csrf: csrf })).status).toBe(303);
    await endOf(chat, 'after the dashboard revoked its link');
    expect(await status(bo.chatUrl)).toBe(404);
    const renewed = (await (await api('GET', `/conversation/participants/${bo.id}`)).json()) as {
      result: { chat_url: string };
    };
    expect(renewed.result.chat_url).not.toBe(bo.chatUrl);
    expect(await status(renewed.result.chat_url)).toBe(200);
  });

  it("signing out ends the dashboard's open live transcript stream", { timeout: 60_000 }, async () => {
    const cy = await enroll('+15551230003');
    const { cookie, csrfOf } = await signIn();
    const livePath = `/dashboard/participants/${cy.id}/live?after=0`;
    const transcript = await stream(livePath, { cookie });
    await expectLive(cy.id, transcript, 'before signing out');

    const csrf = await csrfOf(`/dashboard/participants/${cy.id}`);
    const signedOut = await post('/dashboard/logout', cookie, { _csrf: csrf });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    await endOf(transcript, 'after its session signed out');
    expect(await status(livePath, { headers: { cookie } })).toBe(401);
  });
});

describe('security headers', () => {
  it('the chat page, its 404 and the dashboard pages forbid framing and inline script, limit referrers', async () => {
    const di = await enroll('+15551230004');
    const { cookie } = await signIn();
    // The chat URL carries its token: no Referer at all. The dashboard keeps it to itself (its CSRF Origin check).
    for (const [path, expected, referrerPolicy, headers] of [
      [di.chatUrl, 200, 'no-referrer', {}],
      [`/chat/${'x'.repeat(43)}`, 404, 'no-referrer', {}],
      ['/dashboard/login', 200, 'same-origin', {}],
      [`/dashboard/participants/${di.id}`, 200, 'same-origin', { cookie }],
    ] as const) {
      const response = await fetch(`${server.baseUrl}${path}`, { headers });
      expect(response.status, path).toBe(expected);
      expect(response.headers.get('x-frame-options'), path).toBe('DENY');
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('referrer-policy'), path).toBe(referrerPolicy);
      const policy = response.headers.get('content-security-policy') ?? '';
      expect(policy, path).toContain("default-src 'none'");
      expect(policy, path).toContain("script-src 'self'");
      expect(policy, path).toContain("frame-ancestors 'none'");
      expect(policy, path).not.toContain('unsafe-inline');
      // The policy only works if the page has no inline script or handler for it to block.
      const page = await response.text();
      expect(page, path).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|\son[a-z]+=|javascript:|\sstyle=/i);
    }
  });
});
