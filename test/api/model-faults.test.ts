/**
 * The model misbehaving, against the wired application in process (the real OpenAI-compatible adapter and its SDK
 * retries, the scripted model server, the webhook channel to a local gateway): HTTP 429 and 500, a hang past
 * LLM_TIMEOUT, malformed JSON in tool-call arguments, an empty `choices` array, a reply with neither content nor
 * tool calls. In every case the server stays up (health 200, the next message is answered), the participant gets a
 * sensible answer, the inbound message is kept (transcript, inbound record processed), and the error is visible in
 * the logs, the metrics and the events. A model that keeps failing past the adapter's retries is an outage: the
 * participant gets the one outage notice, and the message is held (recorded, still pending) for the outage retry job
 * (see test/channels/llm-outage.test.ts for the recovery).
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { FALLBACK_TEXT } from '../../src/engine/tool-loop.ts';
import { createBuiltInMessageCatalogue } from '../../src/i18n/built-in-catalogues.ts';
import { type Application, createApplication } from '../../src/main.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import {
  type ScriptedChatRequest,
  type ScriptedOpenAiServer,
  type ScriptedReply,
  startScriptedOpenAiServer,
} from '../support/scripted-openai-server.ts';
import { waitUntil } from '../support/wait-until.ts';

const PHONE = '+15551230001';
let model: ScriptedOpenAiServer | undefined;
let gateway: HttpReceiver | undefined;
let app: Application | undefined;
let logLines: Record<string, unknown>[];

afterEach(async () => {
  await app?.stop();
  await model?.close();
  await gateway?.close();
  app = undefined;
});

/** The faulty reply for the participant's first message; a normal one for everything else. */
async function startWith(
  fault: (request: ScriptedChatRequest, index: number) => ScriptedReply | undefined,
  llmTimeout = '30s',
) {
  gateway = await startHttpReceiver();
  model = await startScriptedOpenAiServer({
    respond: (request, index) => {
      const said = request.lastMessage?.content ?? '';
      if (said === 'trigger' || request.lastMessage?.role === 'tool') {
        const faulty = fault(request, index);
        if (faulty) return faulty;
      }
      return { content: `Coach heard: ${said}` };
    },
  });
  logLines = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logLines.push(JSON.parse(line));
      done();
    },
  });
  const config = loadConfig({
    API_ADDR: '127.0.0.1:0',
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'test',
    LLM_TIMEOUT: llmTimeout,
    LLM_MAX_RETRIES: '1',
    PROMPTPIPE_WEBHOOK_URL: gateway.url,
    LOG_LEVEL: 'info',
  });
  app = await createApplication({
    config,
    log: pino({ level: 'info' }, sink),
    store: await createSqliteStore({ filename: ':memory:' }),
  });
  await app.start();
  const participant = await app.participants.enroll({ phoneNumber: PHONE, name: 'Ada' }, { greet: false });
  return participant.id;
}

async function send(text: string, id: string): Promise<void> {
  const response = await app?.server.inject({
    method: 'POST',
    url: '/channels/webhook/messages',
    payload: { from: PHONE, text, id },
  });
  expect(response?.statusCode).toBe(202);
  await app?.inbound.idle();
}

const deliveredTexts = (): string[] =>
  (gateway?.requests ?? []).map((request) => (JSON.parse(request.body) as { text: string }).text);

async function metricsText(): Promise<string> {
  return (await app?.server.inject({ url: '/metrics' }))?.body ?? '';
}

/** What every fault case checks after the faulty turn. */
async function expectSurvived(participantId: string, answer: string): Promise<void> {
  const current = app as Application;
  // The participant got a sensible answer…
  await waitUntil('the answer to the faulty turn', () => deliveredTexts().includes(answer));
  // …the message is kept…
  const transcript = await current.store.transcript.list(participantId);
  expect(transcript.filter((entry) => entry.role === 'user').map((entry) => entry.content)).toEqual(['trigger']);
  expect(transcript.find((entry) => entry.kind === 'reply')?.content).toBe(answer);
  expect(await current.store.inbound.listUnprocessed()).toEqual([]);
  // …and the server is up: health, and the next message gets the model's normal answer.
  expect((await current.server.inject({ url: '/health' })).statusCode).toBe(200);
  await send('are you there?', 'gw-after');
  await waitUntil('the next answer', () => deliveredTexts().includes('Coach heard: are you there?'));
}

/** What every outage case checks: the notice, the message kept and pending, the error visible, the server up. */
async function expectHeld(participantId: string, error: string): Promise<void> {
  const current = app as Application;
  await waitUntil('the outage notice', () =>
    deliveredTexts().includes(createBuiltInMessageCatalogue().t('en', 'reply.outageNotice')),
  );
  const transcript = await current.store.transcript.list(participantId);
  expect(transcript.filter((entry) => entry.role === 'user').map((entry) => entry.content)).toEqual(['trigger']);
  expect(transcript.some((entry) => entry.kind === 'reply')).toBe(false);
  expect((await current.store.inbound.listUnprocessed()).map((message) => message.text)).toEqual(['trigger']);
  const [outage] = await current.store.events.list({ participantId, type: 'llm-outage' });
  expect(String(outage?.data['error'])).toContain(error);
  expect(logLines.find((line) => line.msg === 'LLM call failed')?.error).toContain(error);
  expect(await metricsText()).toMatch(/promptpipe_llm_calls_total\{purpose="intake",model="[^"]+",outcome="error"\} 1/);
  const health = await current.server.inject({ url: '/health' });
  expect(health.statusCode).toBe(200);
  expect(health.json().status).toBe('healthy');
}

async function fallbackEvents(participantId: string) {
  return (await app?.store.events.list({ participantId, type: 'fallback-sent' })) ?? [];
}

describe('the model misbehaving', () => {
  it('HTTP 429 on every attempt: the outage notice, the message held; error logged, counted and recorded', async () => {
    const participantId = await startWith(() => ({ status: 429, error: 'Rate limit reached for requests' }));
    await send('trigger', 'gw-1');
    await expectHeld(participantId, '429');
    expect(model?.requests.filter((request) => request.lastMessage?.content === 'trigger')).toHaveLength(2);
    const logged = logLines.find((line) => line.msg === 'LLM call failed');
    expect(logged).toMatchObject({ level: 50, participantId });
  });

  it('HTTP 500 once, then success: the SDK retries and the participant gets the model reply', async () => {
    const participantId = await startWith((_request, index) =>
      index === 0 ? { status: 500, error: 'upstream exploded' } : undefined,
    );
    await send('trigger', 'gw-1');
    await expectSurvived(participantId, 'Coach heard: trigger');
    expect(await fallbackEvents(participantId)).toEqual([]);
  });

  it('HTTP 500 on every attempt: the outage notice, the message held, error visible', async () => {
    const participantId = await startWith(() => ({ status: 500, error: 'upstream exploded' }));
    await send('trigger', 'gw-1');
    await expectHeld(participantId, '500');
  });

  it('a hang past LLM_TIMEOUT: the outage notice, and the error says it timed out', async () => {
    // 2 s: short for the test, long enough for the normal answers around it even on a loaded machine.
    const participantId = await startWith(() => ({ content: 'far too late', delayMs: 30_000 }), '2s');
    await send('trigger', 'gw-1');
    await expectHeld(participantId, 'timed out after 2000 ms');
  });

  it('malformed JSON in tool-call arguments: the model sees the tool error and answers', async () => {
    const participantId = await startWith((request) =>
      request.lastMessage?.role === 'tool'
        ? { content: 'Sorry, let me try that differently. Which habit?' }
        : { toolCalls: [{ name: 'save_user_profile', arguments: '{"habit_domain": "walking",' }] },
    );
    await send('trigger', 'gw-1');
    await expectSurvived(participantId, 'Sorry, let me try that differently. Which habit?');
    const toolResult = model?.requests.find((request) => request.lastMessage?.role === 'tool')?.lastMessage;
    expect(toolResult?.content).toContain('not valid JSON');
    const [called] = (await app?.store.events.list({ participantId, type: 'tool-called' })) ?? [];
    expect(called?.data).toMatchObject({ name: 'save_user_profile', outcome: 'error' });
    expect(await metricsText()).toContain('promptpipe_tool_calls_total{tool="save_user_profile",outcome="error"} 1');
  });

  it('an empty choices array: the outage notice, the message held, error visible', async () => {
    const participantId = await startWith(() => ({
      rawBody: { id: 'chatcmpl-x', object: 'chat.completion', created: 0, model: 'scripted', choices: [] },
    }));
    await send('trigger', 'gw-1');
    await expectHeld(participantId, 'no choices');
  });

  it('neither content nor tool calls: the "tell me more" fallback, logged and recorded', async () => {
    const participantId = await startWith(() => ({ content: '   ' }));
    await send('trigger', 'gw-1');
    await expectSurvived(participantId, FALLBACK_TEXT.emptyResponse);
    expect(logLines.find((line) => line.msg === 'no usable model reply: fallback sent')).toMatchObject({
      level: 40,
      outcome: 'empty_response',
    });
    expect((await fallbackEvents(participantId))[0]?.data).toMatchObject({ outcome: 'empty_response', error: null });
  });
});
