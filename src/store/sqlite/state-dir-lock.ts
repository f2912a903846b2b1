/**
 * SQLite is single-process: one PromptPipe process per state directory. The lock is a pid file,
 * `$PROMPTPIPE_STATE_DIR/promptpipe.lock`, created exclusively (`O_CREAT | O_EXCL`, atomic on every local file
 * system), holding `{"pid":…,"hostname":…,"acquired_at":…}`.
 *
 * - A second process finds the file and is refused with an error naming the holder's pid.
 * - Stale locks: a holder that died without cleaning up (SIGKILL, power loss) left the file behind. When the pid
 *   in it is no longer alive on this host, the file is removed and taken. A lock written on another host (a shared
 *   volume) cannot be checked and is respected.
 * - Released on exit: `release()` (called when the store closes) and a synchronous `exit` handler remove the file.
 *
 * Why not flock(2): Node has no portable flock, and a native package would be a binary download. The exclusive
 * create + liveness check gives the same guarantees for processes on one host.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../domain/errors.ts';

export const STATE_DIR_LOCK_FILE = 'promptpipe.lock';

export interface StateDirLock {
  readonly path: string;
  /** Removes the lock file (only if it is still ours). Idempotent. */
  release(): void;
}

interface LockContent {
  pid: number;
  hostname: string;
  acquired_at: string;
}

function readHolder(path: string): LockContent | undefined {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockContent>;
    if (typeof value.pid !== 'number') return undefined;
    return { pid: value.pid, hostname: String(value.hostname ?? ''), acquired_at: String(value.acquired_at ?? '') };
  } catch {
    return undefined;
  }
}

/** Signal 0 checks existence: ESRCH = no such process; EPERM = alive, owned by someone else. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function tryCreate(path: string, content: LockContent): boolean {
  let descriptor: number;
  try {
    descriptor = openSync(path, 'wx', 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(descriptor, JSON.stringify(content));
  } finally {
    closeSync(descriptor);
  }
  return true;
}

/** Takes the state directory's lock or throws `AppError('conflict')` naming the process that holds it. */
export function acquireStateDirLock(stateDir: string, options: { pid?: number } = {}): StateDirLock {
  const path = join(stateDir, STATE_DIR_LOCK_FILE);
  const pid = options.pid ?? process.pid;
  const content: LockContent = { pid, hostname: hostname(), acquired_at: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if (tryCreate(path, content)) {
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        process.off('exit', release);
        // Only our own file: never remove a lock another process took after ours was (wrongly) removed.
        if (readHolder(path)?.pid === pid) {
          try {
            unlinkSync(path);
          } catch {
            // Already gone.
          }
        }
      };
      process.on('exit', release);
      return { path, release };
    }
    const holder = readHolder(path);
    if (holder === undefined) {
      // Being written by its creator right now, or corrupt: a corrupt file from a dead writer is stale.
      if (attempt === 0) continue;
      unlinkStale(path);
      continue;
    }
    const sameHost = holder.hostname === '' || holder.hostname === hostname();
    if (sameHost && holder.pid !== pid && !isProcessAlive(holder.pid)) {
      unlinkStale(path);
      continue;
    }
    throw new AppError(
      'conflict',
      `the state directory ${stateDir} is in use by another PromptPipe process (pid ${holder.pid}` +
        `${sameHost ? '' : ` on host ${holder.hostname}`}, since ${holder.acquired_at}). SQLite allows one process ` +
        `per state directory: stop that process, or use PostgreSQL (DATABASE_URL) to run several instances. If no such ` +
        `process exists, delete ${path}.`,
      { details: { holder_pid: holder.pid, lock_file: path } },
    );
  }
  throw new AppError('conflict', `could not take the state directory lock ${path}; try again`);
}

function unlinkStale(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
