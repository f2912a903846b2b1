/**
 * Adherence alerts against the real `promptpipe serve` process (ADHERENCE_MISSED_PROMPTS=2, ADHERENCE_SILENT_DAYS=3,
 * manual clock): a participant who leaves their daily prompts unanswered raises one alert per rule and episode,
 * however long the silence lasts and even after staff resolve it; a message from them ends the episode, and the next
 * silence raises new ones.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { describeOutput, type ServerProcess, startServer, stopServer, waitFor } from '../support/server-process.ts';

const API_TOKEN = 'adherence-e2e-api-token';
const PHONE = '+15551230501';

let serverProcess: ServerProcess | undefined;
let model: ScriptedOpenAiServer;
let gateway: HttpReceiver;
let stateDir: string;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-adherence-'));
  gateway = await startHttpReceiver();
  model = await startScriptedOpenAiServer({
    respond: (request) => {
      const said = request.lastMessage?.content ?? '';
      if (request.lastMessage?.role === 'tool') return { content: 'Scheduled.' };
      if (said === 'Every morning at 09:00') {
        return {
          toolCalls: [{ name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '09:00' } }],
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
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: '2026-03-02T14:00:00.000Z',
    PROMPTPIPE_CHANNEL: 'webhook',
    PROMPTPIPE_WEBHOOK_URL: gateway.url,
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    ADHERENCE_MISSED_PROMPTS: '2',
    ADHERENCE_SILENT_DAYS: '3',
    ADHERENCE_CHECK_EVERY: '1h',
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

async function adherenceAlerts(): Promise<{ id: string; rule: string }[]> {
  const response = await call('GET', '/alerts');
  const alerts = ((await response.json()) as { result: { alerts: { id: string; kind: string; rule: string }[] } })
    .result.alerts;
  return alerts.filter((alert) => alert.kind === 'adherence').toReversed();
}

async function clockTo(iso: string): Promise<void> {
  const response = await call('POST', '/admin/clock', { set_to: iso });
  expect(response.status, await response.clone().text()).toBe(200);
}

describe('adherence alerts, against the server process', () => {
  it('one alert per rule and episode; a message from the participant starts a new episode', {
    timeout: 120_000,
  }, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(describeOutput(serverProcess)));
    const wait = <T>(what: string, check: () => T | Promise<T>) => waitFor(what, check, 20_000, [serverProcess]);
    await call('POST', '/conversation/participants', { phone_number: PHONE, name: 'Ada', timezone: 'UTC' });
    await wait('the greeting', () => texts().includes('Hello!'));
    await call('POST', '/channels/webhook/messages', { from: PHONE, text: 'Every morning at 09:00', id: 'm-1' });
    await wait('the schedule', () => texts().includes('Scheduled.'));

    // Prompts on 3 and 4 March go unanswered: the missed-prompts rule fires once, on the second.
    await clockTo('2026-03-03T12:00:00.000Z');
    expect(await adherenceAlerts()).toEqual([]);
    await clockTo('2026-03-04T12:00:00.000Z');
    const first = await adherenceAlerts();
    expect(first.map((alert) => alert.rule)).toEqual(['2 daily prompts unanswered since 2026-03-02T14:00:00.000Z']);
    // Resolved by staff, the silence goes on: no second alert for it; three silent days add the other rule, once.
    const firstId = first[0]?.id ?? '';
    expect((await call('POST', `/alerts/${firstId}/resolve`, { note: 'texted them' })).status).toBe(200);
    await clockTo('2026-03-07T12:00:00.000Z');
    expect((await adherenceAlerts()).map((alert) => alert.rule)).toEqual([
      '2 daily prompts unanswered since 2026-03-02T14:00:00.000Z',
      'no message for 3 days since 2026-03-02T14:00:00.000Z',
    ]);

    // A message ends the episode; two more unanswered prompts are a new one.
    await call('POST', '/channels/webhook/messages', { from: PHONE, text: 'Sorry, I was away', id: 'm-2' });
    await wait('the reply', () => texts().includes('Coach heard: Sorry, I was away'));
    await clockTo('2026-03-09T12:00:00.000Z');
    const rules = (await adherenceAlerts()).map((alert) => alert.rule);
    expect(rules).toHaveLength(3);
    expect(rules[2]).toMatch(/^2 daily prompts unanswered since 2026-03-07T12:00:00/);
  });
});
