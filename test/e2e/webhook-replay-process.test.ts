/**
 * The webhook channel's defences against replays and probing, against the real `promptpipe serve` process (spawned
 * with `node src/cli/main.ts serve`), over HTTP like a gateway and like an attacker who captured a signed request:
 * - the same signed request posted three times is one turn, with an `id` and without one (the hash of what was signed);
 * - a request signed in 2001, or a message whose own `timestamp` is from 2001, is refused and nothing is recorded;
 * - a sender who is not enrolled gets the very same answer as one who is (and is only logged);
 * - outbound requests carry the same signed timestamp, so a gateway verifies them the same way;
 * - without a secret, the server warns at start-up when it listens beyond loopback (and only then).
 *
 * "Nothing else was processed" is observed without waiting for time to pass: after the requests under test, one more
 * message is sent, and a participant's messages are processed in arrival order, so once its reply is in the history,
 * anything posted before it was processed too, or never will be.
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import {
  answersAsItself,
  describeOutput,
  freePort,
  type ServerProcess,
  spawnServer,
  startServer,
  stopServer,
  waitFor,
} from '../support/server-process.ts';

const API_TOKEN = 'replay-api-token';
const SECRET = 'replay-webhook-secret';
const PHONE = '+15551230071';
const STRANGER = '+15551230072';
const GREETING = 'Welcome! Which habit shall we build?';
/** 2001-09-09T01:46:40Z. */
const LONG_AGO = new Date(1_000_000_000_000);
const replyTo = (text: string): string => `Noted: ${text}`;

/** A gateway's signature: `<Unix seconds>.<body>`, HMAC-SHA256 with the shared secret (docs/api.md, Signatures). */
function signedHeaders(body: string, signedAt = new Date()): Record<string, string> {
  const timestamp = String(Math.floor(signedAt.getTime() / 1000));
  const signature = createHmac('sha256', SECRET).update(`${timestamp}.${body}`).digest('hex');
  return { 'x-promptpipe-timestamp': timestamp, 'x-promptpipe-signature': `sha256=${signature}` };
}

// biome-ignore lint/suspicious/noExplicitAny: JSON read loosely by the test
type Json = any;

let stateDir: string;
let model: ScriptedOpenAiServer;
let gateway: HttpReceiver;
let server: ServerProcess | undefined;
let participantId: string;
let sentinels = 0;

async function api(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const response = await fetch(`${server?.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${API_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: await response.json() };
}

async function postRaw(body: string, headers: Record<string, string>) {
  const response = await fetch(`${server?.baseUrl}/channels/webhook/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
}

async function history(): Promise<{ role: string; content: string }[]> {
  return (await api('GET', `/conversation/participants/${participantId}/history?limit=1000`)).json.result;
}

const said = async (): Promise<string[]> =>
  (await history()).filter((entry) => entry.role === 'user').map((entry) => entry.content);
const modelHeard = (text: string): number =>
  model.requests.filter((request) => request.lastMessage?.role === 'user' && request.lastMessage.content === text)
    .length;

/** One more message, answered: everything the participant sent before it has been dealt with (see above). */
async function settle(): Promise<void> {
  sentinels += 1;
  const text = `sentinel ${sentinels}`;
  const body = JSON.stringify({ from: PHONE, text, id: `gw-sentinel-${sentinels}` });
  expect((await postRaw(body, signedHeaders(body))).status).toBe(202);
  await waitFor(
    `the reply to "${text}"`,
    async () => (await history()).some((entry) => entry.role === 'assistant' && entry.content === replyTo(text)),
    15_000,
    [server],
  );
}

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-replay-'));
  model = await startScriptedOpenAiServer({
    respond: (request) =>
      request.lastMessage?.content?.includes('expecting a greeting')
        ? { content: GREETING }
        : { content: replyTo(request.lastMessage?.content ?? '') },
  });
  gateway = await startHttpReceiver();
  server = await startServer({
    PATH: process.env.PATH ?? '',
    PROMPTPIPE_STATE_DIR: stateDir,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'test',
    GENAI_MODEL: 'scripted',
    PROMPTPIPE_CHANNEL: 'webhook',
    PROMPTPIPE_WEBHOOK_URL: gateway.url,
    PROMPTPIPE_WEBHOOK_SECRET: SECRET,
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    LOG_LEVEL: 'info',
  });
  const enrolled = await api('POST', '/conversation/participants', { phone_number: PHONE, timezone: 'UTC' });
  expect(enrolled.status).toBe(201);
  participantId = enrolled.json.result.id;
}, 60_000);

afterAll(async () => {
  if (server) await stopServer(server);
  await model?.close();
  await gateway?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 30_000);

describe('promptpipe serve: signed webhook requests cannot be replayed', () => {
  it('signs outbound requests with the same timestamp scheme', async ({ onTestFailed }) => {
    onTestFailed(() => console.error(describeOutput(server)));
    const greeting = await waitFor('the greeting at the gateway', () => gateway.requests[0], 15_000, [server]);
    const timestamp = greeting.headers['x-promptpipe-timestamp'];
    expect(timestamp).toMatch(/^\d+$/);
    const expected = createHmac('sha256', SECRET).update(`${timestamp}.${greeting.body}`).digest('hex');
    expect(greeting.headers['x-promptpipe-signature']).toBe(`sha256=${expected}`);
  });

  it.for([
    ['with an id', { from: PHONE, text: 'walked after lunch', id: 'gw-replayed' }],
    ['without an id', { from: PHONE, text: 'walked after dinner' }],
  ] as const)(
    'turns the same signed request posted three times, %s, into one turn',
    async ([, payload], { onTestFailed }) => {
      onTestFailed(() => console.error(describeOutput(server)));
      const body = JSON.stringify(payload);
      const headers = signedHeaders(body);
      const answers: Awaited<ReturnType<typeof postRaw>>[] = [];
      for (let attempt = 0; attempt < 3; attempt += 1) answers.push(await postRaw(body, headers));
      expect(answers.map((answer) => [answer.status, answer.text])).toEqual(
        Array.from({ length: 3 }, () => [202, '{"status":"ok"}']),
      );
      await settle();
      expect((await said()).filter((text) => text === payload.text)).toHaveLength(1);
      expect(modelHeard(payload.text)).toBe(1);
    },
  );

  it('refuses a request signed in 2001 and a message dated 2001, and records neither', async ({ onTestFailed }) => {
    onTestFailed(() => console.error(describeOutput(server)));
    const stale = JSON.stringify({ from: PHONE, text: 'signed long ago', id: 'gw-2001-signed' });
    const staleAnswer = await postRaw(stale, signedHeaders(stale, LONG_AGO));
    expect(staleAnswer.status).toBe(401);
    expect(JSON.parse(staleAnswer.text).message).toContain('outside PROMPTPIPE_WEBHOOK_TOLERANCE');

    const dated = JSON.stringify({ from: PHONE, text: 'dated long ago', timestamp: LONG_AGO.toISOString() });
    const datedAnswer = await postRaw(dated, signedHeaders(dated));
    expect(datedAnswer.status).toBe(400);
    expect(JSON.parse(datedAnswer.text).message).toContain('timestamp 2001-09-09T01:46:40.000Z is');

    await settle();
    const texts = await said();
    expect(texts).not.toContain('signed long ago');
    expect(texts).not.toContain('dated long ago');
    expect(modelHeard('signed long ago') + modelHeard('dated long ago')).toBe(0);
  });

  it('answers a sender who is not enrolled exactly like one who is', async ({ onTestFailed }) => {
    onTestFailed(() => console.error(describeOutput(server)));
    const known = JSON.stringify({ from: PHONE, text: 'is anyone there?', id: 'gw-known' });
    const unknown = JSON.stringify({ from: STRANGER, text: 'is anyone there?', id: 'gw-unknown' });
    const knownAnswer = await postRaw(known, signedHeaders(known));
    const unknownAnswer = await postRaw(unknown, signedHeaders(unknown));
    expect(unknownAnswer).toEqual(knownAnswer);
    expect(knownAnswer.status).toBe(202);
    // Logged for the organiser, not processed, not enrolled.
    await waitFor(
      'the log line about the sender who is not enrolled',
      () => server?.output.join('').includes(`"from":"${STRANGER}"`),
      15_000,
      [server],
    );
    const participants: { phone_number: string }[] = (await api('GET', '/conversation/participants')).json.result;
    expect(participants.map((participant) => participant.phone_number)).toEqual([PHONE]);
  });
});

/** `promptpipe serve` on `host` (with `secret`, if any) until `/health` answers; then stopped: its whole output. */
async function serveAndStop(host: string, secret?: string): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'promptpipe-warning-'));
  try {
    for (let attempt = 1; ; attempt += 1) {
      const port = await freePort();
      const spawned = spawnServer({
        PATH: process.env.PATH ?? '',
        PROMPTPIPE_STATE_DIR: directory,
        API_ADDR: `${host}:${port}`,
        PROMPTPIPE_API_TOKEN: API_TOKEN,
        PROMPTPIPE_CHANNEL: 'webhook',
        ...(secret ? { PROMPTPIPE_WEBHOOK_SECRET: secret } : {}),
        LOG_LEVEL: 'info',
      });
      try {
        await waitFor(
          'GET /health',
          () => answersAsItself(`http://127.0.0.1:${port}`, spawned.child, undefined),
          20_000,
          [spawned],
        );
      } catch (error) {
        await stopServer(spawned);
        if (attempt < 3 && spawned.output.join('').includes('EADDRINUSE')) continue;
        throw error;
      }
      const exit = await stopServer(spawned);
      const output = spawned.output.join('');
      expect(exit, output).toEqual({ code: 0, signal: null });
      // The last line of a clean shutdown: the output is complete.
      expect(output).toContain('"msg":"stopped"');
      return output;
    }
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

describe('promptpipe serve: the start-up warning of a webhook without a secret', () => {
  const WARNING = 'PROMPTPIPE_WEBHOOK_SECRET is not set and the server listens on a non-loopback address';

  it('is in the output when API_ADDR is 0.0.0.0:<port>, even with an API token', { timeout: 60_000 }, async () => {
    expect(await serveAndStop('0.0.0.0')).toContain(WARNING);
  });

  it('is not when API_ADDR is 127.0.0.1:<port>', { timeout: 60_000 }, async () => {
    expect(await serveAndStop('127.0.0.1')).not.toContain(WARNING);
  });

  it('is not when a secret is set', { timeout: 60_000 }, async () => {
    expect(await serveAndStop('0.0.0.0', 'a-secret')).not.toContain(WARNING);
  });
});
