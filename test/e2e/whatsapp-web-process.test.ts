/**
 * End to end, out of process, on the `whatsapp-web` channel: the real `promptpipe` CLI and server with the fake
 * WhatsApp loaded through the TEST-ONLY PROMPTPIPE_WHATSAPP_WEB_SOCKET_MODULE (test/support/fake-whatsapp-socket-
 * module.ts), which exchanges messages with this test through files.
 *
 * `whatsapp login` (QR "scanned") → `whatsapp status` → `serve` connects with the stored credentials (no QR) →
 * enroll → greeting → intake over WhatsApp text → clock to the prompt instant → daily prompt and a REAL poll →
 * a Done vote encrypted here like the participant's phone does → success_count 1 → SIGTERM exits 0.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptPollVote } from '../support/poll-vote-encryption.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { answersAsItself, assertNoSecretsInOutput } from '../support/server-process.ts';
import { COACH, createStudyCoach, SAID } from '../support/study-coach-script.ts';
import { waitUntil } from '../support/wait-until.ts';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SOCKET_MODULE = fileURLToPath(new URL('../support/fake-whatsapp-socket-module.ts', import.meta.url));
const API_TOKEN = 'e2e-api-token';
const CLOCK_START = '2026-03-02T14:00:00.000Z';
const PROMPT_INSTANT = '2026-03-03T13:50:00.000Z';
const PHONE = '+15551230003';
const PHONE_JID = '15551230003@s.whatsapp.net';
/** The fake's account (FakeWhatsApp's default). */
const ACCOUNT_JID = '15550009999@s.whatsapp.net';

interface SentLine {
  id: string;
  jid: string;
  text?: string;
  poll?: { name: string; values: string[]; selectableCount: number; secret: string };
}

let fakeDir: string;
let stateDir: string;
let model: ScriptedOpenAiServer;
let server:
  | {
      child: ChildProcess;
      env: Record<string, string>;
      output: string[];
      baseUrl: string;
      exit: Promise<number | null>;
    }
  | undefined;
const unexpected: string[] = [];
let inboxCounter = 0;

function baseEnv(): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '',
    PROMPTPIPE_ENV_FILE: '',
    PROMPTPIPE_STATE_DIR: stateDir,
    PROMPTPIPE_CHANNEL: 'whatsapp-web',
    PROMPTPIPE_WHATSAPP_WEB_SOCKET_MODULE: SOCKET_MODULE,
    FAKE_WHATSAPP_DIR: fakeDir,
    LOG_LEVEL: 'warn',
  };
}

function sent(): SentLine[] {
  const file = join(fakeDir, 'sent.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as SentLine);
}

/** Drops a Baileys `messages.upsert` payload into the fake's inbox (renamed into place, so never read half-written). */
function deliver(message: Record<string, unknown>): void {
  inboxCounter += 1;
  const name = `${String(inboxCounter).padStart(6, '0')}.json`;
  const temporary = join(fakeDir, 'inbox', `${name}.tmp`);
  writeFileSync(temporary, JSON.stringify({ messages: [message] }));
  renameSync(temporary, join(fakeDir, 'inbox', name));
}

function participantSays(text: string, id: string): void {
  deliver({ key: { remoteJid: PHONE_JID, fromMe: false, id }, message: { conversation: text } });
}

function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 20_000): Promise<NonNullable<T>> {
  return waitUntil(what, check, {
    timeoutMs,
    intervalMs: 25,
    details: () => `${server?.output.join('') ?? ''}\nunexpected: ${unexpected}`,
  });
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

// biome-ignore lint/suspicious/noExplicitAny: JSON read loosely by the test
async function api(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: any }> {
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

const runCli = promisify(execFile);

beforeAll(async () => {
  fakeDir = await mkdtemp(join(tmpdir(), 'promptpipe-fake-whatsapp-'));
  stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-e2e-whatsapp-'));
  model = await startScriptedOpenAiServer({ respond: createStudyCoach(unexpected) });
});

afterAll(async () => {
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGKILL');
    await server.exit;
  }
  await model?.close();
  await rm(fakeDir, { recursive: true, force: true });
  await rm(stateDir, { recursive: true, force: true });
  if (server) assertNoSecretsInOutput(server);
});

describe('promptpipe on whatsapp-web, as separate processes', () => {
  it('links with `whatsapp login`, and `whatsapp status` reports it', { timeout: 60_000 }, async () => {
    const login = await runCli(process.execPath, ['src/cli/main.ts', 'whatsapp', 'login', '--timeout', '30'], {
      cwd: REPO_ROOT,
      env: { ...baseEnv(), FAKE_WHATSAPP_AUTO_LINK: '1' },
    });
    expect(login.stdout).toContain('scan this QR code');
    expect(login.stdout).toContain('Linked as +15550009999');
    const status = await runCli(process.execPath, ['src/cli/main.ts', 'whatsapp', 'status', '--json'], {
      cwd: REPO_ROOT,
      env: { ...baseEnv(), API_ADDR: `127.0.0.1:${await freePort()}` },
    });
    expect(JSON.parse(status.stdout)).toEqual({
      linked: true,
      account: '+15550009999',
      connection: null,
      connected: false,
    });
  });

  it('runs a study day over WhatsApp: real poll, encrypted Done vote, success_count 1', {
    timeout: 90_000,
  }, async () => {
    const port = await freePort();
    const env = {
      ...baseEnv(),
      API_ADDR: `127.0.0.1:${port}`,
      OPENAI_BASE_URL: model.baseUrl,
      OPENAI_API_KEY: 'test',
      GENAI_MODEL: 'scripted',
      PROMPTPIPE_CLOCK: 'manual',
      PROMPTPIPE_CLOCK_START: CLOCK_START,
      PROMPTPIPE_API_TOKEN: API_TOKEN,
    };
    const child = spawn(process.execPath, ['src/cli/main.ts', 'serve'], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: string[] = [];
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
    const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    server = { child, env, output, baseUrl: `http://127.0.0.1:${port}`, exit };

    // Connected with the credentials `whatsapp login` stored: /health shows the channel open.
    await waitFor('the whatsapp-web channel to be open', async () => {
      if (!(await answersAsItself(server?.baseUrl ?? '', child, undefined))) return undefined;
      const health = await fetch(`${server?.baseUrl}/health`).catch(() => undefined);
      if (health?.status !== 200) return undefined;
      const body = (await health.json()) as { channels?: Record<string, { state: string }> };
      return body.channels?.['whatsapp-web']?.state === 'open';
    });

    // While the server owns the database, `whatsapp status` asks it.
    const status = await runCli(process.execPath, ['src/cli/main.ts', 'whatsapp', 'status', '--json'], {
      cwd: REPO_ROOT,
      env: { ...baseEnv(), API_ADDR: `127.0.0.1:${port}` },
    });
    expect(JSON.parse(status.stdout)).toMatchObject({ linked: true, connection: 'open', connected: true });

    const enrolled = await api('POST', '/conversation/participants', {
      phone_number: PHONE,
      timezone: 'America/Toronto',
    });
    expect(enrolled.status).toBe(201);
    const id: string = enrolled.json.result.id;
    const sentText = (text: string) => () => sent().find((line) => line.text === text);
    expect(await waitFor('the greeting on WhatsApp', sentText(COACH.greeting))).toMatchObject({ jid: PHONE_JID });

    participantSays(SAID.habit, 'WAIN0001');
    participantSays(SAID.habit, 'WAIN0001');
    await waitFor('the question about timing', sentText(COACH.askTiming));
    participantSays(SAID.timing, 'WAIN0002');
    await waitFor('the end of intake', sentText(COACH.allSet));

    expect((await api('POST', '/admin/clock', { set_to: PROMPT_INSTANT })).status).toBe(200);
    await waitFor('the daily prompt', sentText(COACH.dailyPrompt));
    const poll = await waitFor('the Done poll, as a real poll', () =>
      sent().find((line) => line.poll?.name === 'Did you do it?'),
    );
    expect(poll.poll).toMatchObject({ values: ['Done', 'Next time'], selectableCount: 1 });

    // The participant taps "Done": their phone encrypts the vote with the poll's secret.
    const vote = encryptPollVote(['Done'], {
      pollMessageId: poll.id,
      pollCreatorJid: ACCOUNT_JID,
      voterJid: PHONE_JID,
      messageSecret: Buffer.from(poll.poll?.secret ?? '', 'base64'),
    });
    deliver({
      key: { remoteJid: PHONE_JID, fromMe: false, id: 'WAVOTE0001' },
      message: {
        pollUpdateMessage: {
          pollCreationMessageKey: { remoteJid: PHONE_JID, fromMe: true, id: poll.id },
          vote: {
            encPayload: { base64: Buffer.from(vote.encPayload).toString('base64') },
            encIv: { base64: Buffer.from(vote.encIv).toString('base64') },
          },
        },
      },
    });
    const afterDone = await waitFor('success_count 1', async () => {
      const state = (await api('GET', `/conversation/participants/${id}/state`)).json.result;
      return state.profile?.success_count === 1 ? state : undefined;
    });
    expect(afterDone.conversation_state).toBe('FEEDBACK');
    await waitFor('the feedback reply', sentText(COACH.feedback));

    // The duplicated text was processed once; the coach was never surprised.
    const history = (await api('GET', `/conversation/participants/${id}/history?limit=1000`)).json.result as {
      role: string;
      content: string;
    }[];
    expect(history.filter((entry) => entry.role === 'user' && entry.content === SAID.habit)).toHaveLength(1);
    expect(unexpected).toEqual([]);

    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(output.join('')).not.toMatch(/"level":(50|60)/);
  });
});
