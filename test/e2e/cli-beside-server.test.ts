/**
 * The README's order: `promptpipe serve` runs, and the CLI is used in another terminal on the same SQLite state
 * directory. Reading commands (participants list, export) open the database read-only beside the server; changing
 * ones (participants enroll, participants import) go through the server's API with the configured token; the
 * terminal chat, which needs its own engine, says what to do instead.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, type ServerProcess, startServer, stopServer } from '../support/server-process.ts';

const TOKEN = 'cli-beside-server-token';
let stateDir = '';
let server: ServerProcess;
let env: Record<string, string>;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-cli-beside-'));
  env = {
    PATH: process.env.PATH ?? '',
    PROMPTPIPE_STATE_DIR: stateDir,
    PROMPTPIPE_API_TOKEN: TOKEN,
    PROMPTPIPE_ENV_FILE: '',
    LOG_LEVEL: 'warn',
  };
  server = await startServer(env);
}, 60_000);

afterAll(async () => {
  if (server) await stopServer(server);
  await rm(stateDir, { recursive: true, force: true });
});

/** `promptpipe <args>` in another process, as in a second terminal. */
function cli(args: string[], extra: Record<string, string> = {}) {
  const run = spawnSync(process.execPath, ['src/cli/main.ts', ...args], {
    cwd: REPO_ROOT,
    env: { ...env, ...extra },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

async function listedPhones(): Promise<string[]> {
  const response = await fetch(`${server.baseUrl}/conversation/participants`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  const body = (await response.json()) as { result: { phone_number: string }[] };
  return body.result.map((participant) => participant.phone_number).sort();
}

describe('the CLI beside a running server on SQLite', { timeout: 120_000 }, () => {
  it('enrolls through the server, and lists and exports read-only beside it', async () => {
    const enrolled = cli(['participants', 'enroll', '--phone', '+15550100031', '--name', 'Ada']);
    expect(enrolled.code, enrolled.stderr).toBe(0);
    expect(JSON.parse(enrolled.stdout)).toMatchObject({ phone_number: '+15550100031', name: 'Ada' });
    expect(await listedPhones()).toEqual(['+15550100031']);

    const csv = join(stateDir, 'people.csv');
    await writeFile(csv, 'phone_number,name,language\n+15550100032,Grace,es\n+15550100031,Ada,en\n');
    const imported = cli(['participants', 'import', csv]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('1 enrolled, 1 skipped (already enrolled)');
    expect(await listedPhones()).toEqual(['+15550100031', '+15550100032']);

    const listed = cli(['participants', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    const phones = (JSON.parse(listed.stdout) as { phone_number: string }[]).map((row) => row.phone_number).sort();
    expect(phones).toEqual(['+15550100031', '+15550100032']);

    const out = join(stateDir, 'export');
    const exported = cli(['export', '--out', out]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(await readdir(out)).toContain('participants.csv');
    expect(await readFile(join(out, 'participants.csv'), 'utf8')).toContain('+15550100032');

    // The server kept serving throughout.
    expect((await fetch(`${server.baseUrl}/health`)).status).toBe(200);
  });

  it('says so when the token does not match the server’s, and changes nothing', async () => {
    const refused = cli(['participants', 'enroll', '--phone', '+15550100033'], { PROMPTPIPE_API_TOKEN: 'wrong' });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('refused the API token');
    expect(await listedPhones()).not.toContain('+15550100033');
  });

  it('tells the terminal chat what to do instead of failing on the lock', () => {
    const chat = cli(['chat', '--phone', '+15550100034']);
    expect(chat.code).not.toBe(0);
    expect(chat.stderr).toContain('stop the server first');
    expect(chat.stderr).toContain(`pid ${server.child.pid}`);
  });
});
