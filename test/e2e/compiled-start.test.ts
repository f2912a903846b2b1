/**
 * `npm start` runs the bundled build (`npm run build` = `tsc -p tsconfig.build.json` into `dist/` under a lock, then
 * rolldown into `dist/bundle/`; then `node <flags> dist/bundle/main.js serve`, as package.json says). This builds it
 * exactly so and starts it with npm start's own command line: the bundled server must find what it reads next to the
 * sources (the prompts, the message catalogues, the dashboard's assets), must run a conversation (the model, the
 * store, the job runner and the webhook channel, all inside the bundle) and — the reason for the build and for loading
 * channel SDKs lazily — must not load Baileys or the Twilio REST client when those channels are off, nor `pg` on
 * SQLite (all three stay outside the bundle, so they would show as loaded from node_modules).
 * Which modules the process loaded is recorded by a `module.registerHooks` hook passed with `--import`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nonAsciiLines } from '../../scripts/ascii-bundle.ts';
import { startCommand } from '../../scripts/start-command.ts';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { answersAsItself, assertNoSecretsInOutput, freePort, REPO_ROOT, waitFor } from '../support/server-process.ts';

const API_TOKEN = 'compiled-start-token';

/** Appends the URL of every module the process loads to the file named by LOADED_MODULES_FILE. */
const RECORDING_HOOK = `
import { registerHooks } from 'node:module';
import { appendFileSync } from 'node:fs';
registerHooks({
  load(url, context, nextLoad) {
    appendFileSync(process.env.LOADED_MODULES_FILE, url + '\\n');
    return nextLoad(url, context);
  },
});
`;

const GREETING = 'Hello from the bundled coach!';

/** `npm run build`, as `npm start` runs it first; resolves with its exit code. */
function build(): Promise<number | null> {
  const child = spawn(process.execPath, ['scripts/build.ts'], { cwd: REPO_ROOT, stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('npm start: the compiled server', () => {
  let directory: string;
  let child: ChildProcess | undefined;
  let output = '';
  let env: Record<string, string> = {};
  let baseUrl = '';
  let loadedModulesFile = '';
  let model: ScriptedOpenAiServer | undefined;
  let gateway: HttpReceiver | undefined;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'promptpipe-compiled-'));
    const scripted = await startScriptedOpenAiServer({ respond: () => ({ content: GREETING }) });
    model = scripted;
    const receiver = await startHttpReceiver();
    gateway = receiver;
    // Two builds at once, as when several instances are started together: the lock makes the second wait for the
    // first, then find everything up to date.
    const builds = await Promise.all([build(), build()]);
    expect(builds).toEqual([0, 0]);
    const hook = join(directory, 'record-modules.mjs');
    await writeFile(hook, RECORDING_HOOK);
    loadedModulesFile = join(directory, 'loaded-modules.txt');
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    // npm start's own command line (package.json): its variables, then `node <flags…> <entry> serve`.
    const start = startCommand({});
    env = {
      PATH: process.env.PATH ?? '',
      ...start.environment,
      API_ADDR: `127.0.0.1:${port}`,
      PROMPTPIPE_STATE_DIR: join(directory, 'state'),
      PROMPTPIPE_CHANNEL: 'webhook',
      PROMPTPIPE_WEBHOOK_URL: receiver.url,
      PROMPTPIPE_API_TOKEN: API_TOKEN,
      OPENAI_BASE_URL: scripted.baseUrl,
      OPENAI_API_KEY: 'unused',
      LOADED_MODULES_FILE: loadedModulesFile,
    };
    child = spawn(process.execPath, ['--import', pathToFileURL(hook).href, ...start.nodeArguments], {
      cwd: REPO_ROOT,
      env: { PROMPTPIPE_ENV_FILE: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const started = child;
    await waitFor(
      'the compiled server to answer /health',
      async () => {
        if (started.exitCode !== null) throw new Error(`the compiled server exited:\n${output}`);
        return answersAsItself(baseUrl, started, undefined);
      },
      30_000,
    );
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await model?.close();
    await gateway?.close();
    await rm(directory, { recursive: true, force: true });
    assertNoSecretsInOutput({ env, output: [output] });
  });

  it('runs the bundle in dist/bundle/, not the per-file build nor the TypeScript sources', async () => {
    const loaded = (await readFile(loadedModulesFile, 'utf8')).split('\n');
    const ownModules = loaded.filter(
      (url) => url.startsWith(pathToFileURL(REPO_ROOT).href) && !url.includes('/node_modules/'),
    );
    expect(ownModules.some((url) => url.endsWith('/dist/bundle/main.js'))).toBe(true);
    expect(ownModules.filter((url) => !url.includes('/dist/bundle/'))).toEqual([]);
    // The native SQLite driver stays outside the bundle and is loaded from node_modules.
    expect(loaded.some((url) => url.includes('/node_modules/better-sqlite3/'))).toBe(true);
  });

  it("enrolls a participant and delivers the model's greeting through the webhook gateway", async () => {
    const enrolled = await fetch(`${baseUrl}/conversation/participants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ phone_number: '+1 (555) 123-0042', name: 'Grace', timezone: 'Europe/Paris' }),
    });
    expect(enrolled.status).toBe(201);
    const participant = ((await enrolled.json()) as { result: { id: string; phone_number: string } }).result;
    expect(participant.phone_number).toBe('+15551230042');
    const delivered = await waitFor(
      'the greeting at the gateway',
      async () =>
        gateway?.requests
          .map((request) => JSON.parse(request.body) as { to?: string; text?: string; participant_id?: string })
          .find((message) => message.text === GREETING),
      20_000,
    );
    expect(delivered).toMatchObject({ to: '+15551230042', participant_id: participant.id });
    expect(model?.requests.length).toBeGreaterThan(0);
  });

  it('does not load the SDKs of channels that are not enabled, nor the PostgreSQL driver on SQLite', async () => {
    const loaded = await readFile(loadedModulesFile, 'utf8');
    expect(loaded).not.toContain('/node_modules/@whiskeysockets/baileys/');
    expect(loaded).not.toContain('/node_modules/twilio/lib/rest/');
    expect(loaded).not.toContain('/node_modules/grammy/');
    expect(loaded).not.toContain('/node_modules/pg/');
  });

  it('is ASCII throughout, so V8 keeps its sources at one byte a character', async () => {
    const directory = join(REPO_ROOT, 'dist', 'bundle');
    const files = (await readdir(directory)).filter((file) => file.endsWith('.js'));
    expect(files).toContain('main.js');
    for (const file of files) {
      expect({ file, lines: nonAsciiLines(await readFile(join(directory, file), 'utf8')) }).toEqual({
        file,
        lines: [],
      });
    }
  });

  it('serves the dashboard assets from the source tree', async () => {
    const response = await fetch(`${baseUrl}/dashboard/assets/dashboard.css`);
    expect(response.status).toBe(200);
    const css = await response.text();
    expect(css).toBe(await readFile(join(REPO_ROOT, 'src', 'web', 'assets', 'dashboard.css'), 'utf8'));
  });

  it('records the built-in prompt files and their versions at start-up', async () => {
    const response = await fetch(`${baseUrl}/export/events.jsonl`, {
      headers: { authorization: `Bearer ${API_TOKEN}` },
    });
    expect(response.status).toBe(200);
    const events = (await response.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; data: unknown });
    const startup = events.find((event) => event.type === 'configuration-recorded');
    const data = (typeof startup?.data === 'string' ? JSON.parse(startup.data) : startup?.data) as {
      prompts: { file: string; version: string }[];
    };
    expect(data.prompts.map((prompt) => prompt.file).sort()).toEqual(
      ['feedback.txt', 'intake.txt', 'prompt-generator.txt'].sort(),
    );
    for (const prompt of data.prompts) expect(prompt.version).toMatch(/\S/);
  });
});
