/**
 * Quiet hours against the real `promptpipe serve` process (QUIET_HOURS=21:00-08:00, webhook channel, scripted model,
 * manual clock): a participant in New York whose daily prompt is due at 22:00 local gets it at 08:00 local the next
 * morning, once; a message they send at 23:00 local is answered at once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { describeOutput, type ServerProcess, startServer, stopServer, waitFor } from '../support/server-process.ts';

const API_TOKEN = 'quiet-e2e-api-token';
const PHONE = '+15551230401';

let serverProcess: ServerProcess | undefined;
let model: ScriptedOpenAiServer;
let gateway: HttpReceiver;
let stateDir: string;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-quiet-'));
  gateway = await startHttpReceiver();
  model = await startScriptedOpenAiServer({
    respond: (request) => {
      const said = request.lastMessage?.content ?? '';
      if (request.lastMessage?.role === 'tool') return { content: 'Scheduled.' };
      if (said === 'Every evening at 22:10 please') {
        return {
          toolCalls: [{ name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '22:10' } }],
        };
      }
      return { content: said.includes('expecting a greeting') ? 'Hello!' : `Coach heard: ${said}` };
    },
  });
  serverProcess = await startServer({
    PATH: process.env.PATH ?? '',
    PROMPTPIPE_STATE_DIR: stateDir,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'test',
    GENAI_MODEL: 'scripted',
    LLM_MAX_RETRIES: '0',
    // 09:00 in New York (UTC-5 until 8 March 2026).
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: '2026-03-02T14:00:00.000Z',
    PROMPTPIPE_CHANNEL: 'webhook',
    PROMPTPIPE_WEBHOOK_URL: gateway.url,
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    QUIET_HOURS: '21:00-08:00',
    LOG_LEVEL: 'warn',
  });
}, 60_000);

afterAll(async () => {
  if (serverProcess) await stopServer(serverProcess);
  await model?.close();
  await gateway?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 30_000);

async function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> {
  return fetch(`${serverProcess?.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${API_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const texts = (): string[] =>
  gateway.requests.map((request) => {
    const message = JSON.parse(request.body) as { text?: string; question?: string };
    return message.text ?? message.question ?? '';
  });
/** Daily prompts sent: each is followed by its Done poll. */
const prompts = (): number => texts().filter((text) => text === 'Did you do it?').length;

async function clockTo(iso: string): Promise<void> {
  const response = await call('POST', '/admin/clock', { set_to: iso });
  expect(response.status, await response.clone().text()).toBe(200);
}

describe('quiet hours, against the server process', () => {
  it('a prompt due at 22:00 local goes out at 08:00 local; a reply at 23:00 is not held', {
    timeout: 90_000,
  }, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(`${describeOutput(serverProcess)}\n${texts().join('\n')}`));
    const wait = <T>(what: string, check: () => T | Promise<T>) => waitFor(what, check, 20_000, [serverProcess]);
    await call('POST', '/conversation/participants', {
      phone_number: PHONE,
      name: 'Ada',
      timezone: 'America/New_York',
    });
    await wait('the greeting', () => texts().includes('Hello!'));
    await call('POST', '/channels/webhook/messages', { from: PHONE, text: 'Every evening at 22:10 please', id: 'm-1' });
    await wait('the schedule', () => texts().includes('Scheduled.'));

    // 22:00 (the prompt's time, 10 minutes before 22:10) and 23:00 in New York: nothing proactive, a reply at once.
    await clockTo('2026-03-03T03:00:00.000Z');
    await clockTo('2026-03-03T04:00:00.000Z');
    expect(prompts()).toBe(0);
    await call('POST', '/channels/webhook/messages', { from: PHONE, text: 'Still awake', id: 'm-2' });
    await wait('the reply at 23:00', () => texts().includes('Coach heard: Still awake'));

    await clockTo('2026-03-03T12:59:00.000Z');
    expect(prompts()).toBe(0);
    // 08:00 in New York: the prompt goes out, once.
    await clockTo('2026-03-03T13:01:00.000Z');
    await wait('the prompt at 08:00', () => prompts() === 1);
    await clockTo('2026-03-03T20:00:00.000Z');
    expect(prompts()).toBe(1);
  });
});
