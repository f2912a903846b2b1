import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import {
  acquireStateDirLock,
  STATE_DIR_LOCK_FILE,
  STATE_DIR_LOCK_HOLDER_FILE,
} from '../../src/store/sqlite/state-dir-lock.ts';

const dirs: string[] = [];
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'promptpipe-lock-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const LOCK_MODULE = new URL('../../src/store/sqlite/state-dir-lock.ts', import.meta.url).href;

/** Tries the lock from another process: 'taken' or the refusal's message. */
function tryFromAnotherProcess(dir: string): string {
  const script =
    `import { acquireStateDirLock } from ${JSON.stringify(LOCK_MODULE)};` +
    `try { acquireStateDirLock(${JSON.stringify(dir)}); process.stdout.write('taken'); }` +
    'catch (error) { process.stdout.write(error.message); }';
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return child.stdout || child.stderr;
}

/** A process holding the lock until it is killed; resolves once it holds it. */
async function holdInAnotherProcess(dir: string) {
  const script =
    `import { acquireStateDirLock } from ${JSON.stringify(LOCK_MODULE)};` +
    `acquireStateDirLock(${JSON.stringify(dir)}); process.stdout.write('held'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`holder exited with ${code}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    pid: child.pid as number,
    kill: () => {
      child.kill('SIGKILL');
      return exited;
    },
  };
}

describe('state directory lock (SQLite is single-process)', () => {
  it('refuses a second holder in this process and in another, naming the first one', () => {
    const dir = freshDir();
    const lock = acquireStateDirLock(dir);
    expect(JSON.parse(readFileSync(join(dir, STATE_DIR_LOCK_HOLDER_FILE), 'utf8')).pid).toBe(process.pid);

    let refusal: unknown;
    try {
      acquireStateDirLock(dir, { pid: process.pid + 100_000 });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(AppError);
    expect((refusal as AppError).code).toBe('conflict');
    expect((refusal as AppError).message).toContain(`pid ${process.pid}`);
    // The refused attempt in this process did not drop the lock for other processes.
    expect(tryFromAnotherProcess(dir)).toContain('is in use by another PromptPipe process');

    lock.release();
    expect(existsSync(join(dir, STATE_DIR_LOCK_HOLDER_FILE))).toBe(false);
    expect(tryFromAnotherProcess(dir)).toBe('taken');
  });

  it('is free the moment its holder is killed, whatever pid the next process has', async () => {
    const dir = freshDir();
    const holder = await holdInAnotherProcess(dir);
    expect(tryFromAnotherProcess(dir)).toContain(`pid ${holder.pid}`);
    expect(() => acquireStateDirLock(dir)).toThrow(/in use by another PromptPipe process/);
    await holder.kill();
    // The holder file is left behind by the kill; it names a pid but is not a lock. Our own pid may be the same
    // number as the dead holder's (a container restart): that must not matter.
    expect(existsSync(join(dir, STATE_DIR_LOCK_HOLDER_FILE))).toBe(true);
    const lock = acquireStateDirLock(dir, { pid: holder.pid });
    expect(JSON.parse(readFileSync(join(dir, STATE_DIR_LOCK_HOLDER_FILE), 'utf8')).pid).toBe(holder.pid);
    lock.release();
  });

  it('replaces a pid file left by an older version when its process is gone (or is this one)', () => {
    for (const pid of [deadPid(), process.pid]) {
      const dir = freshDir();
      writeFileSync(
        join(dir, STATE_DIR_LOCK_FILE),
        JSON.stringify({ pid, hostname: hostname(), acquired_at: new Date().toISOString() }),
      );
      const lock = acquireStateDirLock(dir);
      expect(tryFromAnotherProcess(dir)).toContain('is in use by another PromptPipe process');
      lock.release();
    }
  });

  it('respects a pid file of an older version whose process is still alive on this host', () => {
    const dir = freshDir();
    const alive = process.ppid;
    writeFileSync(
      join(dir, STATE_DIR_LOCK_FILE),
      JSON.stringify({ pid: alive, hostname: hostname(), acquired_at: new Date().toISOString() }),
    );
    expect(() => acquireStateDirLock(dir)).toThrow(new RegExp(`pid ${alive}`));
    expect(JSON.parse(readFileSync(join(dir, STATE_DIR_LOCK_FILE), 'utf8')).pid).toBe(alive);
  });

  it('release is idempotent', () => {
    const dir = freshDir();
    const lock = acquireStateDirLock(dir);
    lock.release();
    lock.release();
    const again = acquireStateDirLock(dir);
    again.release();
  });
});

/** The pid of a process that has certainly exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}
