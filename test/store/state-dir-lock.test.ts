import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import { acquireStateDirLock, STATE_DIR_LOCK_FILE } from '../../src/store/sqlite/state-dir-lock.ts';

const dirs: string[] = [];
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'promptpipe-lock-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The pid of a process that has certainly exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

describe('state directory lock (SQLite is single-process)', () => {
  it('writes the holder pid and refuses a second holder, naming the first one', () => {
    const dir = freshDir();
    const lock = acquireStateDirLock(dir);
    const content = JSON.parse(readFileSync(join(dir, STATE_DIR_LOCK_FILE), 'utf8'));
    expect(content.pid).toBe(process.pid);

    let refusal: unknown;
    try {
      // Another (live) process asking: our own pid is alive, so the lock is not stale.
      acquireStateDirLock(dir, { pid: process.pid + 100_000 });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(AppError);
    expect((refusal as AppError).code).toBe('conflict');
    expect((refusal as AppError).message).toContain(`pid ${process.pid}`);

    lock.release();
    expect(existsSync(join(dir, STATE_DIR_LOCK_FILE))).toBe(false);
    const again = acquireStateDirLock(dir, { pid: process.pid + 100_000 });
    again.release();
  });

  it('takes over a stale lock left by a process that died', () => {
    const dir = freshDir();
    const dead = deadPid();
    writeFileSync(
      join(dir, STATE_DIR_LOCK_FILE),
      JSON.stringify({ pid: dead, hostname: hostname(), acquired_at: new Date().toISOString() }),
    );
    const lock = acquireStateDirLock(dir);
    expect(JSON.parse(readFileSync(join(dir, STATE_DIR_LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('respects a lock written on another host (its pid cannot be checked from here)', () => {
    const dir = freshDir();
    writeFileSync(
      join(dir, STATE_DIR_LOCK_FILE),
      JSON.stringify({ pid: deadPid(), hostname: 'another-host.example', acquired_at: new Date().toISOString() }),
    );
    expect(() => acquireStateDirLock(dir)).toThrow(/another-host\.example/);
  });

  it('release only removes its own lock file', () => {
    const dir = freshDir();
    const lock = acquireStateDirLock(dir);
    writeFileSync(
      join(dir, STATE_DIR_LOCK_FILE),
      JSON.stringify({ pid: process.pid + 1, hostname: hostname(), acquired_at: new Date().toISOString() }),
    );
    lock.release();
    expect(existsSync(join(dir, STATE_DIR_LOCK_FILE))).toBe(true);
  });
});
