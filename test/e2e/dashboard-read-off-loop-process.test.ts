/**
 * A slow dashboard read never holds up a turn, against the real `promptpipe serve` process on SQLite (webhook
 * channel, scripted OpenAI-compatible model). The server's dashboard reads run on a worker thread with their own
 * read-only connection; the TEST-ONLY gate (`PROMPTPIPE_TEST_DASHBOARD_READ_GATE`) makes that thread wait while a file
 * exists. With the gate closed, a roster page is requested and stays in progress; meanwhile `/health` answers and a
 * participant's message is answered all the way to the gateway. Only after the gate opens does the roster page
 * arrive, complete.
 *
 * Were the read on the event loop, nothing would be answered while it waits (the page would also come at once, the
 * gate being the worker's); were the worker missing, the page would be answered at once: either way this fails.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { describeOutput, type ServerProcess, startServer, stopServer, waitFor } from '../support/server-process.ts';

const API_TOKEN = 'dashboard-read-api-token';
const PHONE = '+15551230081';
const GREETING = 'Hi! Which habit would you like to build?';

let serverProcess: ServerProcess | undefined;
let model: ScriptedOpenAiServer;
let gateway: HttpReceiver;
let stateDir: string;
let gate: string;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-dashboard-read-'));
  gate = join(stateDir, 'dashboard-read.gate');
  gateway = await startHttpReceiver();
  model = await startScriptedOpenAiServer({
    respond: (request) => {
      const said = request.lastMessage?.content ?? '';
      return { content: said.includes('expecting a greeting') ? GREETING : `Coach heard: ${said}` };
    },
  });
  serverProcess = await startServer({
    PATH: process.env.PATH ?? '',
    PROMPTPIPE_STATE_DIR: stateDir,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'test',
    GENAI_MODEL: 'scripted',
    PROMPTPIPE_CHANNEL: 'webhook',
    PROMPTPIPE_WEBHOOK_URL: gateway.url,
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    PROMPTPIPE_TEST_DASHBOARD_READ_GATE: gate,
    LOG_LEVEL: 'warn',
  });
}, 60_000);

afterAll(async () => {
  rmSync(gate, { force: true });
  if (serverProcess) await stopServer(serverProcess);
  await model?.close();
  await gateway?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 30_000);

function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> {
  return fetch(`${serverProcess?.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${API_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const delivered = (): string[] =>
  gateway.requests.map((request) => (JSON.parse(request.body) as { text: string }).text);

describe('a slow dashboard read, against the server process', () => {
  it('leaves turns and /health answering until it completes', { timeout: 90_000 }, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(describeOutput(serverProcess)));
    const wait = <T>(what: string, check: () => T | Promise<T>) => waitFor(what, check, 30_000, [serverProcess]);
    const enrolled = await call('POST', '/conversation/participants', { phone_number: PHONE, name: 'Ada' });
    expect(enrolled.status).toBe(201);
    await wait('the greeting', () => delivered().includes(GREETING));

    const signIn = await fetch(`${serverProcess?.baseUrl}/dashboard/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${API_TOKEN}`,
      redirect: 'manual',
    });
    expect(signIn.status).toBe(303);
    const cookie = String(signIn.headers.get('set-cookie')).split(';')[0] ?? '';

    writeFileSync(gate, 'closed');
    let roster: { status: number; body: string } | undefined;
    const rosterRead = fetch(`${serverProcess?.baseUrl}/dashboard`, { headers: { cookie } }).then(async (response) => {
      roster = { status: response.status, body: await response.text() };
    });

    expect((await call('GET', '/health')).status).toBe(200);
    const sent = await call('POST', '/channels/webhook/messages', { from: PHONE, text: 'I walked today', id: 'gw-1' });
    expect(sent.status).toBe(202);
    await wait('the reply at the gateway', () => delivered().includes('Coach heard: I walked today'));
    expect(roster).toBeUndefined();

    rmSync(gate);
    await rosterRead;
    expect(roster?.status).toBe(200);
    expect(roster?.body).toContain(PHONE);
    expect(roster?.body).toContain('1 participant(s)');
  });
});
