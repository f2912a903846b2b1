/**
 * A model outage against the real `promptpipe serve` process (webhook channel, scripted OpenAI-compatible model, manual
 * clock): a participant writes three times while the model is down, and one of their messages fails while the outage
 * retry job is claimed and waiting for their lock (the interleaving that used to start a second outage). They get
 * exactly one outage notice; once the model is back, the real replies to all three, in order, once each; and
 * `promptpipe_llm_outage_messages_total` counts three messages held and three recovered, however many attempts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltInMessageCatalogue } from '../../src/i18n/built-in-catalogues.ts';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import {
  type ScriptedOpenAiServer,
  type ScriptedReply,
  startScriptedOpenAiServer,
} from '../support/scripted-openai-server.ts';
import { describeOutput, type ServerProcess, startServer, stopServer, waitFor } from '../support/server-process.ts';

const API_TOKEN = 'outage-e2e-api-token';
const CLOCK_START = '2026-03-02T14:00:00.000Z';
const PHONE = '+15551230077';
const NOTICE = createBuiltInMessageCatalogue().t('en', 'reply.outageNotice');
const GREETING = 'Hi! Which habit would you like to build?';
const DOWN: ScriptedReply = { status: 503, error: 'overloaded' };

let serverProcess: ServerProcess | undefined;
let model: ScriptedOpenAiServer;
let gateway: HttpReceiver;
let stateDir: string;
/** What the model does now: answer, fail, or hold the call until `release` (then fail). */
let modelState: 'up' | 'down' | 'held' = 'up';
let release: () => void = () => undefined;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-outage-'));
  gateway = await startHttpReceiver();
  model = await startScriptedOpenAiServer({
    respond: async (request) => {
      if (modelState === 'held') {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return DOWN;
      }
      if (modelState === 'down') return DOWN;
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
    LLM_MAX_RETRIES: '0',
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: CLOCK_START,
    PROMPTPIPE_CHANNEL: 'webhook',
    PROMPTPIPE_WEBHOOK_URL: gateway.url,
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    LOG_LEVEL: 'warn',
  });
}, 60_000);

afterAll(async () => {
  release();
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

/** The participant writes (an unsigned webhook is accepted on loopback without PROMPTPIPE_WEBHOOK_SECRET). */
async function send(text: string, id: string): Promise<void> {
  const response = await call('POST', '/channels/webhook/messages', { from: PHONE, text, id });
  expect(response.status).toBe(202);
}

const advanceClock = async (minutes: number): Promise<void> => {
  const response = await call('POST', '/admin/clock', { advance_ms: minutes * 60_000 });
  expect(response.status, await response.clone().text()).toBe(200);
};

const delivered = (): string[] =>
  gateway.requests.map((request) => (JSON.parse(request.body) as { text: string }).text);
const notices = (): number => delivered().filter((text) => text === NOTICE).length;

async function outageMessages(outcome: string): Promise<number> {
  const text = await (await call('GET', '/metrics')).text();
  const line = text
    .split('\n')
    .find((row) => row.startsWith(`promptpipe_llm_outage_messages_total{outcome="${outcome}"}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

async function retryJobStatus(participantId: string): Promise<string | undefined> {
  const response = await call('GET', `/conversation/participants/${participantId}/state`);
  const state = (await response.json()) as { result: { pending_jobs: { kind: string; status: string }[] } };
  const jobs = state.result.pending_jobs;
  return jobs.find((job) => job.kind === 'llm_outage_retry')?.status;
}

describe('a model outage, against the server process', () => {
  it('one notice per outage, then every held message answered once; the held metric counts messages', {
    timeout: 90_000,
  }, async ({ onTestFailed }) => {
    onTestFailed(() => {
      console.error(describeOutput(serverProcess));
      console.error(`delivered: ${JSON.stringify(delivered())}`);
    });
    const wait = <T>(what: string, check: () => T | Promise<T>) => waitFor(what, check, 20_000, [serverProcess]);
    const enrolled = await call('POST', '/conversation/participants', { phone_number: PHONE, name: 'Ada' });
    expect(enrolled.status).toBe(201);
    const participantId = ((await enrolled.json()) as { result: { id: string } }).result.id;
    await wait('the greeting', () => delivered().includes(GREETING));

    // The model goes down: the first message is held and the one notice goes out.
    modelState = 'down';
    await send('first', 'gw-1');
    await wait('the outage notice', () => notices() === 1);
    await wait('the retry job', async () => (await retryJobStatus(participantId)) === 'pending');

    // The second message's turn retries the first message and its model call hangs, holding the participant's lock;
    // meanwhile the retry job comes due and is claimed, and waits for that lock.
    modelState = 'held';
    const requestsBefore = model.requests.length;
    await send('second', 'gw-2');
    await wait('the hanging model call', () => model.requests.length > requestsBefore);
    const clockMoved = advanceClock(1);
    await wait('the retry job claimed', async () => (await retryJobStatus(participantId)) === 'running');
    // The hanging call fails: still the same outage.
    modelState = 'down';
    release();
    await clockMoved;

    // A third message while down, and several more failed retries.
    await send('third', 'gw-3');
    await wait('the third message held', async () => (await outageMessages('held')) === 3);
    for (const minutes of [2, 4, 5]) await advanceClock(minutes);
    expect(model.requests.length).toBeGreaterThan(requestsBefore + 4);
    expect(notices()).toBe(1);
    expect(await outageMessages('held')).toBe(3);

    // The model is back: the next retry answers all three, in order, once each.
    modelState = 'up';
    await advanceClock(5);
    await wait('the three replies', () => delivered().includes('Coach heard: third'));
    expect(delivered()).toEqual([GREETING, NOTICE, 'Coach heard: first', 'Coach heard: second', 'Coach heard: third']);
    expect(await outageMessages('held')).toBe(3);
    expect(await outageMessages('recovered')).toBe(3);
    expect(await outageMessages('failed')).toBe(0);
  });
});
