/**
 * SQLite is single-process: a second `promptpipe serve` on the same state directory is refused at start-up with an
 * error naming the first one's pid, and the directory is free again once the first one has exited.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STATE_DIR_LOCK_FILE, STATE_DIR_LOCK_HOLDER_FILE } from '../../src/store/sqlite/state-dir-lock.ts';
import {
  describeOutput,
  freePort,
  killServer,
  type ServerProcess,
  spawnServer,
  startServer,
  stopServer,
} from '../support/server-process.ts';

let stateDir = '';
const started: ServerProcess[] = [];

afterAll(async () => {
  // Exited ones too: stopping checks what each wrote for credentials.
  for (const server of started) await stopServer(server, 10_000);
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 30_000);

describe('SQLite: one process per state directory', () => {
  it('refuses a second process on the same state directory, naming the holder pid', { timeout: 60_000 }, async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-single-'));
    const env = { PATH: process.env.PATH ?? '', PROMPTPIPE_STATE_DIR: stateDir, LOG_LEVEL: 'warn' };
    const first = await startServer(env);
    started.push(first);
    expect(existsSync(join(stateDir, STATE_DIR_LOCK_FILE))).toBe(true);

    const second = spawnServer({ ...env, API_ADDR: `127.0.0.1:${await freePort()}` });
    started.push(second);
    const exit = await second.exit;
    const output = describeOutput(second);
    expect(exit.code, output).not.toBe(0);
    expect(output).toContain(`pid ${first.child.pid}`);
    expect(output).toContain('is in use by another PromptPipe process');
    // The first one is untouched and still serving.
    expect((await fetch(`${first.baseUrl}/health`)).status).toBe(200);

    // Released on exit: a new process starts once the first has stopped (the lock file stays; it is not the lock).
    expect(await stopServer(first)).toEqual({ code: 0, signal: null });
    expect(existsSync(join(stateDir, STATE_DIR_LOCK_HOLDER_FILE))).toBe(false);
    const third = await startServer(env);
    started.push(third);
    expect((await fetch(`${third.baseUrl}/health`)).status).toBe(200);
  });

  it('takes over the lock of a process that was SIGKILLed (the kernel released it)', { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'promptpipe-stale-'));
    try {
      const env = { PATH: process.env.PATH ?? '', PROMPTPIPE_STATE_DIR: dir, LOG_LEVEL: 'warn' };
      const killed = await startServer(env);
      await killServer(killed);
      expect(existsSync(join(dir, STATE_DIR_LOCK_FILE))).toBe(true);
      const next = await startServer(env);
      started.push(next);
      expect((await fetch(`${next.baseUrl}/health`)).status).toBe(200);
      expect(await stopServer(next)).toEqual({ code: 0, signal: null });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
