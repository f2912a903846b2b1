/**
 * The original PromptPipe's `test-scripts/` (bash + curl + jq), rewritten as our own checks and run against the real
 * `promptpipe serve` process, with the API token added: the same requests (method, path, fields, digits-only phone
 * numbers) and the same expected statuses, script by script. The checks that fail only because of the original's
 * own bugs are at the end, each asserting what PromptPipe does instead and why (docs/migrating.md lists them).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { type ServerProcess, startServer, stopServer } from '../support/server-process.ts';

const TOKEN = 'test-scripts-token';
/** The scripts' TEST_PHONE and TEST_PHONE_2: digits only, as the original stored numbers. */
const TEST_PHONE = '15551234567';
const TEST_PHONE_2 = '15557654321';
let directory: string;
let gateway: HttpReceiver;
let model: ScriptedOpenAiServer;
let server: ServerProcess;
let environment: Record<string, string>;

interface Answer {
  status: number;
  json: Record<string, unknown> | undefined;
}

/** One curl of a script: `test_endpoint METHOD PATH DATA` with `Authorization` added; the body must be JSON. */
async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

/** The envelope's `result` of an answer (undefined when there is no body). */
function resultOf(answer: { json: Record<string, unknown> | undefined }): unknown {
  return answer.json?.['result'];
}

async function expectStatus(method: string, path: string, body: unknown, status: number): Promise<Answer> {
  const answer = await call(method, path, body);
  expect(answer.status, `${method} ${path} ${JSON.stringify(answer.json)}`).toBe(status);
  return answer;
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'promptpipe-test-scripts-'));
  gateway = await startHttpReceiver();
  model = await startScriptedOpenAiServer({ respond: () => ({ content: 'A short motivating answer.' }) });
  environment = {
    PROMPTPIPE_STATE_DIR: directory,
    PROMPTPIPE_API_TOKEN: TOKEN,
    PROMPTPIPE_WEBHOOK_URL: gateway.url,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'scripted-key',
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: '2026-03-02T14:00:00.000Z',
  };
  server = await startServer(environment);
});
afterAll(async () => {
  if (server && !server.exited) await stopServer(server);
  await model?.close();
  await gateway?.close();
  await rm(directory, { recursive: true, force: true });
});

const SEND = (extra: Record<string, unknown>) => ({ to: TEST_PHONE, ...extra });
const BRANCH = [
  { label: 'Option A', body: 'You chose A' },
  { label: 'Option B', body: 'You chose B' },
];

describe('quick-test.sh', () => {
  it('sends, then reads receipts, responses and stats', async () => {
    await expectStatus('POST', '/send', SEND({ type: 'static', body: 'Quick test' }), 200);
    for (const path of ['/receipts', '/responses', '/stats']) await expectStatus('GET', path, undefined, 200);
  });
});

describe('test-send.sh', () => {
  it.each([
    ['a static message', SEND({ type: 'static', body: 'Hello from the test' }), 200],
    ['a branch message', SEND({ type: 'branch', body: 'Choose an option:', branch_options: BRANCH }), 200],
    ['a genai message', SEND({ type: 'genai', body: 'x', system_prompt: 'Be brief.', user_prompt: 'A tip' }), 200],
    ['an invalid phone number', { to: 'invalid-phone', type: 'static', body: 'x' }, 400],
    ['no phone number', { type: 'static', body: 'x' }, 400],
    ['an empty body', SEND({ type: 'static', body: '' }), 400],
    ['an invalid prompt type', SEND({ type: 'invalid_type', body: 'x' }), 400],
  ])('POST /send with %s', async (_case, body, status) => {
    const answer = await expectStatus('POST', '/send', body, status);
    if (status === 200) expect(answer.json).toMatchObject({ status: 'ok', message: 'Message sent successfully' });
    else expect(answer.json).toMatchObject({ status: 'error' });
  });

  it('GET /send is 405 and invalid JSON 400', async () => {
    await expectStatus('GET', '/send', undefined, 405);
    await expectStatus('POST', '/send', '{"invalid": json}', 400);
  });
});

describe('test-genai.sh', () => {
  it('sends each of its 18 genai prompts (each a system and a user prompt)', async () => {
    for (let index = 1; index <= 18; index += 1) {
      const prompt = SEND({
        type: 'genai',
        body: `case ${index}`,
        system_prompt: `Role ${index}`,
        user_prompt: `Task ${index}`,
      });
      await expectStatus('POST', '/send', prompt, 200);
    }
    const asked = model.requests.map((request) => request.body.messages.map((message) => message.content));
    expect(asked).toContainEqual(['Role 18', 'Task 18']);
  });

  it.each([
    ['no system prompt', { user_prompt: 'x' }],
    ['no user prompt', { system_prompt: 'x' }],
    ['empty prompts', { system_prompt: '', user_prompt: '' }],
  ])('refuses a genai prompt with %s (400)', async (_case, prompts) => {
    await expectStatus('POST', '/send', SEND({ type: 'genai', body: 'x', ...prompts }), 400);
  });
});

describe('test-schedule.sh', () => {
  it.each([
    ['static, 9 AM daily', { type: 'static', body: 'x', schedule: { hour: 9, minute: 0 } }],
    [
      'branch, 6 PM Mondays',
      { type: 'branch', body: 'x', branch_options: BRANCH, schedule: { hour: 18, minute: 0, weekday: 1 } },
    ],
    ['genai, 8 AM daily', { type: 'genai', system_prompt: 's', user_prompt: 'u', schedule: { hour: 8, minute: 0 } }],
    [
      'genai, 9 AM Mondays',
      { type: 'genai', system_prompt: 's', user_prompt: 'u', schedule: { hour: 9, minute: 0, weekday: 1 } },
    ],
    [
      'genai, 10 AM Saturdays',
      { type: 'genai', system_prompt: 's', user_prompt: 'u', schedule: { hour: 10, minute: 0, weekday: 6 } },
    ],
    [
      'genai, 9 AM on day 1',
      { type: 'genai', system_prompt: 's', user_prompt: 'u', schedule: { hour: 9, minute: 0, day: 1 } },
    ],
    ['custom with a state, noon', { type: 'custom', body: 'x', state: 'initial', schedule: { hour: 12, minute: 0 } }],
    ['every minute', { type: 'static', body: 'x', schedule: {} }],
    ['New Year, midnight', { type: 'static', body: 'x', schedule: { month: 1, day: 1, hour: 0, minute: 0 } }],
  ])('schedules %s (201, a timer id)', async (_case, prompt) => {
    const answer = await expectStatus('POST', '/schedule', SEND(prompt), 201);
    expect(answer.json).toMatchObject({
      status: 'ok',
      message: 'Scheduled successfully',
      result: expect.stringMatching(/^sched_/),
    });
  });

  it('refuses no schedule, an invalid phone (400) and GET (405)', async () => {
    await expectStatus('POST', '/schedule', SEND({ type: 'static', body: 'x' }), 400);
    await expectStatus('POST', '/schedule', { to: 'invalid-phone', body: 'x', schedule: { hour: 9, minute: 0 } }, 400);
    await expectStatus('GET', '/schedule', undefined, 405);
  });
});

describe('test-responses.sh', () => {
  const now = Math.floor(Date.now() / 1000);
  it.each([
    ['a response', { from: TEST_PHONE, body: 'This is a test response', time: now }, 201],
    ['a response of a second participant', { from: TEST_PHONE_2, body: 'Another response', time: now + 10 }, 201],
    ['emoji and special characters', { from: TEST_PHONE, body: 'Emoji 😊 and @#$%', time: now + 20 }, 201],
    ['a long response', { from: TEST_PHONE, body: 'A long sentence. '.repeat(20), time: now + 30 }, 201],
    ['no sender', { body: 'Missing from field', time: now }, 400],
    ['an invalid phone', { from: 'invalid-phone', body: 'x', time: now }, 400],
    ['an empty body', { from: TEST_PHONE, body: '', time: now }, 400],
    ['an invalid timestamp', { from: TEST_PHONE, body: 'x', time: 'invalid-time' }, 400],
  ])('POST /response with %s', async (_case, body, status) => {
    await expectStatus('POST', '/response', body, status);
  });

  it('lists responses and stats; POST /responses and POST /stats are 405', async () => {
    const responses = await expectStatus('GET', '/responses', undefined, 200);
    expect((resultOf(responses) as unknown[]).length).toBeGreaterThanOrEqual(4);
    const stats = await expectStatus('GET', '/stats', undefined, 200);
    expect(stats.json?.['result']).toMatchObject({
      total_responses: expect.any(Number),
      avg_response_length: expect.any(Number),
    });
    await expectStatus('POST', '/responses', undefined, 405);
    await expectStatus('POST', '/stats', undefined, 405);
  });
});

describe('test-receipts.sh', () => {
  it('lists receipts of sent messages; POST and DELETE are 405', async () => {
    await expectStatus('POST', '/send', { to: TEST_PHONE, type: 'static', body: 'Receipt test 1' }, 200);
    await expectStatus('POST', '/send', { to: TEST_PHONE_2, type: 'static', body: 'Receipt test 2' }, 200);
    const receipts = await expectStatus('GET', '/receipts', undefined, 200);
    expect(receipts.json?.['status']).toBe('ok');
    await expectStatus('POST', '/receipts', undefined, 405);
    await expectStatus('DELETE', '/receipts', undefined, 405);
  });
});

describe('run-all-tests.sh (its integration part)', () => {
  it('send → receipts → response → stats, each prompt type, malformed JSON, five rapid sends', async () => {
    await expectStatus('POST', '/send', SEND({ type: 'static', body: 'Integration test message' }), 200);
    await expectStatus('GET', '/receipts', undefined, 200);
    await expectStatus('POST', '/response', { from: TEST_PHONE, body: 'Integration test response', time: 1 }, 201);
    await expectStatus('GET', '/stats', undefined, 200);
    for (const prompt of [
      { type: 'static', body: 'Static test message' },
      {
        type: 'branch',
        body: 'Choose:',
        branch_options: [
          { label: 'A', body: 'Option A' },
          { label: 'B', body: 'Option B' },
        ],
      },
      { type: 'genai', body: 'Generate message', system_prompt: 'You are helpful', user_prompt: 'Say hello' },
      { type: 'custom', body: 'Custom message', state: 'initial' },
    ]) {
      await expectStatus('POST', '/send', SEND(prompt), 200);
    }
    await expectStatus('POST', '/send', '{"malformed": json}', 400);
    for (let index = 1; index <= 5; index += 1)
      await expectStatus('POST', '/send', SEND({ body: `Rapid test ${index}` }), 200);
  });
});

describe('test-conversation-clean.sh and enroll-participants.sh (with numbers that are phone numbers)', () => {
  it('enrolls four participants, lists them and reads each one', async () => {
    const ids: string[] = [];
    for (const [index, name] of ['Alice Smith', 'Marcus Johnson', 'Elena Rodriguez', 'David Chen'].entries()) {
      const phone = `1555987000${index + 1}`;
      const enrolled = await expectStatus(
        'POST',
        '/conversation/participants',
        { phone_number: phone, name, timezone: 'America/Toronto' },
        201,
      );
      ids.push((resultOf(enrolled) as { id: string }).id);
    }
    const list = await expectStatus('GET', '/conversation/participants', undefined, 200);
    const listed = (resultOf(list) as { id: string; phone_number: string }[]).map((row) => row.id);
    expect(listed).toEqual(expect.arrayContaining(ids));
    for (const id of ids) await expectStatus('GET', `/conversation/participants/${id}`, undefined, 200);
    // quick-delete-conversation-participants.sh deletes by id: 200, then 404.
    await expectStatus('DELETE', `/conversation/participants/${ids[3]}`, undefined, 200);
    await expectStatus('DELETE', `/conversation/participants/${ids[3]}`, undefined, 404);
  });
});

describe('test-restart-persistence.sh (a restart instead of docker compose down/up)', () => {
  it('keeps participants and receipts across a restart', async () => {
    const before = (resultOf(await call('GET', '/receipts')) as unknown[]).length;
    expect((await stopServer(server)).code).toBe(0);
    server = await startServer(environment);
    const participants = (await call('GET', '/conversation/participants')).json?.['result'] as {
      phone_number: string;
    }[];
    expect(participants.map((row) => row.phone_number)).toContain(`+${TEST_PHONE}`);
    expect((resultOf(await call('GET', '/receipts')) as unknown[]).length).toBeGreaterThanOrEqual(before);
  });
});

describe("checks that rely on the original's own bugs (see docs/migrating.md)", () => {
  it('test-schedule.sh expects 500 for {"minute": 99}: an invalid value is the client’s mistake, so 400', async () => {
    const answer = await expectStatus('POST', '/schedule', SEND({ body: 'x', schedule: { minute: 99 } }), 400);
    expect(answer.json?.['message']).toContain('schedule.minute must be an integer from 0 to 59');
  });

  it("test-receipts.sh reads the receipts as a bare array ('.[0].to'): /receipts answers the documented envelope", async () => {
    const receipts = await call('GET', '/receipts');
    expect(Array.isArray(receipts.json)).toBe(false);
    expect((resultOf(receipts) as Record<string, unknown>[])[0]).toMatchObject({
      to: expect.stringMatching(/^\+/),
      status: expect.any(String),
      time: expect.any(Number),
    });
  });

  it('the conversation scripts make up 17-digit numbers (+1555<time>001): no phone number has them, so 400', async () => {
    const answer = await expectStatus(
      'POST',
      '/conversation/participants',
      { phone_number: '+15551772460000001' },
      400,
    );
    expect(answer.json?.['message']).toContain('write it in international form');
  });
});
