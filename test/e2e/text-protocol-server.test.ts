/**
 * End to end with a model server that has NO tool support (it rejects any request with a `tools` field or a
 * `tool`-role message): the real `promptpipe serve` process in `LLM_TOOL_PROTOCOL=text` completes intake — the
 * profile is saved and the daily schedule created — from `<tool_call>` blocks in the model's text.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { answersAsItself, assertNoSecretsInOutput } from '../support/server-process.ts';
import { waitUntil } from '../support/wait-until.ts';

const REPO_ROOT = resolve(import.meta.dirname, '../..');
const API_TOKEN = 'e2e-text-token';
const PHONE = '+15145550199';
const GREETING = 'Hi Bea! Which habit would you like to build?';
const ALL_SET = 'All set: walking every day at 08:30.';

let model: ScriptedOpenAiServer;
let gateway: HttpReceiver;
let stateDir: string;
let child: ChildProcess | undefined;
let baseUrl = '';
let env: Record<string, string> = {};
const output: string[] = [];
const surprises: string[] = [];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const exited = () => child?.exitCode !== null && child?.exitCode !== undefined;
  return waitUntil(what, check, {
    timeoutMs,
    intervalMs: 25,
    stopIf: () => (exited() ? new Error(`server exited while waiting for ${what}\n${output.join('')}`) : undefined),
    details: () => output.join(''),
  });
}

async function api(method: 'GET' | 'POST', path: string, body?: unknown) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${API_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: JSON read loosely by the test
  return { status: response.status, json: (await response.json()) as any };
}

const delivered = (): string[] => gateway.requests.map((request) => JSON.parse(request.body).text as string);

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-e2e-text-'));
  model = await startScriptedOpenAiServer({
    noToolSupport: true,
    respond: (request) => {
      const messages = request.body.messages;
      const system = messages
        .filter((message) => message.role === 'system')
        .map((message) => message.content ?? '')
        .join('\n');
      const last = messages.at(-1)?.content ?? '';
      if (!system.includes('<tool_call>')) {
        surprises.push(`no tool description in the system prompt: ${last}`);
        return { content: 'Walk after breakfast.' };
      }
      if (last.includes('expecting a greeting')) return { content: GREETING };
      if (last.startsWith('<tool_result')) {
        const failed = [...last.matchAll(/<tool_result[^>]*>([\s\S]*?)<\/tool_result>/g)]
          .map((match) => JSON.parse(match[1] ?? '{}') as { status: string })
          .filter((result) => result.status !== 'success');
        if (failed.length > 0) surprises.push(`a tool failed: ${JSON.stringify(failed)}`);
        return { content: ALL_SET };
      }
      if (last.includes('walk')) {
        // Text around the calls and a code fence: the parser must cope, and only the text reaches the participant.
        return {
          content:
            'Let me note that.\n```\n' +
            '<tool_call>{"name": "save_user_profile", "arguments": {"habit_domain": "walking", "preferred_time": "08:30"}}</tool_call>\n' +
            '<tool_call>{"name": "scheduler", "arguments": {"action": "create", "type": "fixed", "fixed_time": "08:30"}}</tool_call>\n```',
        };
      }
      surprises.push(`unexpected: ${last}`);
      return { content: 'Sorry?' };
    },
  });
  gateway = await startHttpReceiver();
  const address = `127.0.0.1:${await freePort()}`;
  baseUrl = `http://${address}`;
  env = {
    PATH: process.env.PATH ?? '',
    API_ADDR: address,
    PROMPTPIPE_STATE_DIR: stateDir,
    OPENAI_BASE_URL: model.baseUrl,
    GENAI_MODEL: 'local-no-tools',
    GENAI_TEMPERATURE: '',
    LLM_TOOL_PROTOCOL: 'text',
    LLM_MAX_TOKENS: '512',
    LLM_EXTRA_BODY: '{"cache_prompt": true}',
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: '2026-03-02T14:00:00.000Z',
    PROMPTPIPE_CHANNEL: 'webhook',
    PROMPTPIPE_WEBHOOK_URL: gateway.url,
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    LOG_LEVEL: 'warn',
  };
  child = spawn(process.execPath, ['src/cli/main.ts', 'serve'], {
    cwd: REPO_ROOT,
    env: { PROMPTPIPE_ENV_FILE: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  const spawned = child;
  await waitFor('GET /health from this process', () => answersAsItself(baseUrl, spawned, undefined));
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((done) => child?.once('close', done));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child?.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
  await model?.close();
  await gateway?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
  assertNoSecretsInOutput({ env, output });
}, 30_000);

describe('LLM_TOOL_PROTOCOL=text against a model server without tool support', () => {
  it('completes intake: profile saved, schedule created, no request carried tools', { timeout: 60_000 }, async () => {
    const enrolled = await api('POST', '/conversation/participants', {
      phone_number: PHONE,
      name: 'Bea',
      timezone: 'America/Toronto',
    });
    expect(enrolled.status).toBe(201);
    const id: string = enrolled.json.result.id;
    await waitFor('the greeting', () => delivered().includes(GREETING));

    const body = JSON.stringify({ from: PHONE, text: 'I want to walk more, every day at 8:30', id: 'gw-t1' });
    const sent = await fetch(`${baseUrl}/channels/webhook/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${API_TOKEN}` },
      body,
    });
    expect(sent.status).toBe(202);
    // Text next to the calls ends the turn once they ran (as in native mode): it is the reply.
    await waitFor('the reply', () => delivered().includes('Let me note that.'));

    const state = (await api('GET', `/conversation/participants/${id}/state`)).json.result;
    expect(state.profile).toMatchObject({ habit_domain: 'walking', preferred_time: '08:30' });
    expect(state.schedules).toEqual([expect.objectContaining({ type: 'fixed', fixed_time: '08:30' })]);
    // Only the visible text reached the participant; the tool blocks did not.
    expect(delivered()).toEqual([GREETING, 'Let me note that.']);
    expect(delivered().some((text) => text.includes('<tool_call>'))).toBe(false);
    // The server never sent tools or tool-role messages (it would have answered 400), and the settings reached it.
    expect(surprises).toEqual([]);
    for (const request of model.requests) {
      expect(request.body.tools).toBeUndefined();
      expect(request.body.messages.some((message) => message.role === 'tool')).toBe(false);
      expect(request.body).toMatchObject({ cache_prompt: true, max_tokens: 512 });
      expect(request.body).not.toHaveProperty('temperature');
    }
    // The transcript has the structured shape whatever the protocol.
    const history = (await api('GET', `/conversation/participants/${id}/history`)).json.result;
    const entries: Array<{ kind: string; content: string; tool_calls?: Array<{ function: { name: string } }> }> =
      history;
    expect(
      entries.filter((entry) => entry.kind === 'tool_result').map((entry) => JSON.parse(entry.content).status),
    ).toEqual(['success', 'success']);
    const calls = entries.filter((entry) => entry.kind === 'tool_call');
    expect(calls.flatMap((entry) => entry.tool_calls?.map((call) => call.function.name) ?? [])).toEqual([
      'save_user_profile',
      'scheduler',
    ]);
  });
});
