/**
 * A crashed server in a container comes back: each `promptpipe serve` runs as pid 1 of its own pid namespace
 * (`unshare -p -f --mount-proc`, what a container runtime gives it), so the restarted server has the same pid as the
 * one that was SIGKILLed. The state directory's lock is a kernel lock that died with the first process: the second
 * start is healthy with the first one's data, while a second live server (also pid 1 in its namespace) is refused.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  describeOutput,
  freePort,
  REPO_ROOT,
  type ServerProcess,
  stopServer,
  waitFor,
} from '../support/server-process.ts';

const unshareWorks = spawnSync('unshare', ['-p', '-f', '--mount-proc', 'true']).status === 0;
if (!unshareWorks) {
  console.warn('SKIPPING the container-restart test: `unshare -p -f --mount-proc` is not permitted on this machine');
}

const started: ServerProcess[] = [];
let stateDir = '';

afterAll(async () => {
  for (const server of started) if (!server.exited) await stopServer(server, 10_000);
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 30_000);

/**
 * `unshare -p -f --mount-proc node src/cli/main.ts serve`: the server is pid 1 of a new pid namespace
 * (`--kill-child`: no server outlives a failed test).
 */
function spawnInOwnPidNamespace(env: Record<string, string>): ServerProcess {
  const child = spawn(
    'unshare',
    ['-p', '-f', '--kill-child', '--mount-proc', process.execPath, 'src/cli/main.ts', 'serve'],
    {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output: string[] = [];
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  const server: ServerProcess = {
    child,
    env,
    baseUrl: `http://${env.API_ADDR}`,
    output,
    exited: false,
    exit: new Promise((resolve) => {
      child.once('close', (code, signal) => {
        server.exited = true;
        resolve({ code, signal });
      });
    }),
  };
  started.push(server);
  return server;
}

/** The server's pid as the host sees it: the only child of `unshare`. */
async function hostPidOfServer(server: ServerProcess): Promise<number> {
  const unsharePid = server.child.pid as number;
  const children = await readFile(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8');
  const pid = Number(children.trim().split(/\s+/)[0]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`unshare ${unsharePid} has no child`);
  return pid;
}

async function startInOwnPidNamespace(base: Record<string, string>, instanceId: string): Promise<ServerProcess> {
  const server = spawnInOwnPidNamespace({
    ...base,
    PROMPTPIPE_INSTANCE_ID: instanceId,
    API_ADDR: `127.0.0.1:${await freePort()}`,
  });
  await waitFor(
    `${instanceId} to answer /health`,
    async () => {
      const response = await fetch(`${server.baseUrl}/health`).catch(() => undefined);
      if (response?.status !== 200) return false;
      return ((await response.json()) as { instance_id?: string }).instance_id === instanceId;
    },
    30_000,
    [server],
  );
  return server;
}

describe.skipIf(!unshareWorks)('a crashed server in its own pid namespace', () => {
  it('starts again after kill -9 with the same pid, with its data; a second live server is still refused', {
    timeout: 120_000,
  }, async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-container-'));
    const env = {
      PATH: process.env.PATH ?? '',
      PROMPTPIPE_ENV_FILE: '',
      PROMPTPIPE_STATE_DIR: stateDir,
      LOG_LEVEL: 'warn',
    };

    const first = await startInOwnPidNamespace(env, 'first');
    const enrolled = await fetch(`${first.baseUrl}/conversation/participants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phone_number: '+15551239876', name: 'Ada', timezone: 'Europe/Berlin' }),
    });
    expect(enrolled.status, describeOutput(first)).toBe(201);
    const { result: participant } = (await enrolled.json()) as { result: { id: string } };

    process.kill(await hostPidOfServer(first), 'SIGKILL');
    await first.exit;

    // Started the same way: pid 1 again, as the crashed one was.
    const second = await startInOwnPidNamespace(env, 'second');
    const found = await fetch(`${second.baseUrl}/conversation/participants/${participant.id}`);
    expect(found.status, describeOutput(second)).toBe(200);
    expect(((await found.json()) as { result: { name: string } }).result.name).toBe('Ada');

    // A second live server on the same state directory, also pid 1 in its namespace, is refused.
    const intruder = spawnInOwnPidNamespace({ ...env, API_ADDR: `127.0.0.1:${await freePort()}` });
    const exit = await intruder.exit;
    expect(exit.code, describeOutput(intruder)).not.toBe(0);
    expect(describeOutput(intruder)).toContain('is in use by another PromptPipe process (pid 1');
    expect((await fetch(`${second.baseUrl}/health`)).status).toBe(200);

    // A graceful stop reaches the server itself (unshare does not pass SIGTERM on).
    process.kill(await hostPidOfServer(second), 'SIGTERM');
    expect(await second.exit).toEqual({ code: 0, signal: null });
  });
});
