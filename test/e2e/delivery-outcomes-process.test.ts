/**
 * What the real `promptpipe serve` says about messages it did not hand to anyone:
 * - the webhook channel without `PROMPTPIPE_WEBHOOK_URL` only records them: the history shows `not_delivered` with
 *   the reason, and `/metrics` never counts them as delivered or sent;
 * - a participant enrolled by `promptpipe chat` (the console channel) on a server that runs only the webhook channel:
 *   the server names them at start-up, and their messages fail visibly instead of going out on the webhook channel.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describeOutput,
  type ServerProcess,
  spawnServer,
  startServer,
  stopServer,
  waitFor,
} from '../support/server-process.ts';

const API_TOKEN = 'e2e-delivery-outcomes-token';
const auth = { authorization: `Bearer ${API_TOKEN}` };
const CONSOLE_PHONE = '+15551230082';

// biome-ignore lint/suspicious/noExplicitAny: JSON read loosely by the test
type Json = any;

let stateDir = '';
let server: ServerProcess | undefined;

async function api(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const response = await fetch(`${server?.baseUrl}${path}`, {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: await response.json() };
}

async function metricsText(): Promise<string> {
  return (await fetch(`${server?.baseUrl}/metrics`, { headers: auth })).text();
}

/** The organiser message's outbound entry once its delivery is recorded. */
async function deliveredEntry(participantId: string, text: string): Promise<Json> {
  return waitFor(
    `the delivery of "${text}"`,
    async () => {
      const history = await api('GET', `/conversation/participants/${participantId}/history`);
      return (history.json.result as Json[]).find((entry) => entry.content === text && entry.delivery);
    },
    20_000,
    [server],
  );
}

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-delivery-outcomes-'));
  const env = { PATH: process.env.PATH ?? '', PROMPTPIPE_STATE_DIR: stateDir, LOG_LEVEL: 'warn' };
  // `npm run chat` enrolls its participant on the console channel; its stdin is closed, so the chat ends at once.
  const chat = spawnServer(env, ['chat', '--phone', CONSOLE_PHONE]);
  const chatExit = await chat.exit;
  expect(chatExit.code, describeOutput(chat, 'promptpipe chat')).toBe(0);
  expect(chat.output.join('')).toContain(`Enrolled ${CONSOLE_PHONE}`);
  server = await startServer({ ...env, PROMPTPIPE_CHANNEL: 'webhook', PROMPTPIPE_API_TOKEN: API_TOKEN });
}, 60_000);

afterAll(async () => {
  if (server) await stopServer(server, 10_000);
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 30_000);

describe('the webhook channel without PROMPTPIPE_WEBHOOK_URL', () => {
  it('records messages as not delivered, with the reason, and never counts them as delivered', async () => {
    const enrolled = await api('POST', '/conversation/participants', { phone_number: '+15551230081' });
    expect(enrolled.status, JSON.stringify(enrolled.json)).toBe(201);
    const participantId = enrolled.json.result.id as string;
    const sent = await api('POST', `/conversation/participants/${participantId}/messages`, { text: 'Hello Ada' });
    expect(sent.status, JSON.stringify(sent.json)).toBe(202);

    const entry = await deliveredEntry(participantId, 'Hello Ada');
    expect(entry.delivery).toMatchObject({
      status: 'not_delivered',
      channel: 'webhook',
      error: expect.stringContaining('PROMPTPIPE_WEBHOOK_URL is not set'),
    });
    const metrics = await metricsText();
    expect(metrics).toMatch(/promptpipe_outbound_messages_total\{channel="webhook",outcome="not_delivered"\} [1-9]/);
    expect(metrics).not.toContain('outcome="delivered"');
    expect(metrics).toMatch(/promptpipe_delivery_status_total\{channel="webhook",status="not_delivered"\} [1-9]/);
    expect(metrics).not.toContain('status="sent"');
  }, 60_000);
});

describe('a participant of `promptpipe chat` on a server without the console channel', () => {
  it('is named at start-up, and their messages fail visibly instead of going out on the webhook channel', async () => {
    const log = server?.output.join('') ?? '';
    expect(log).toMatch(
      /1 participant\(s\) on channel console, which is not enabled on this server \(enabled: webhook\)/,
    );
    const listed = await api('GET', '/conversation/participants');
    const participant = (listed.json.result as Json[]).find((candidate) => candidate.phone_number === CONSOLE_PHONE);
    expect(participant?.channel).toBe('console');

    const sent = await api('POST', `/conversation/participants/${participant.id}/messages`, { text: 'Hello Cleo' });
    expect(sent.status, JSON.stringify(sent.json)).toBe(202);
    const entry = await deliveredEntry(participant.id, 'Hello Cleo');
    expect(entry.delivery).toMatchObject({
      status: 'failed',
      channel: 'console',
      error_code: 'channel_not_enabled',
      error: expect.stringMatching(/^channel console is not enabled on this server \(enabled: webhook\)/),
    });
    const metrics = await metricsText();
    expect(metrics).toContain('promptpipe_outbound_messages_total{channel="console",outcome="failed"} 1');
    expect(metrics).toContain('promptpipe_delivery_status_total{channel="console",status="failed"} 1');
  }, 60_000);
});
