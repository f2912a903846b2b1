/**
 * SQLite is single-process: one PromptPipe process per state directory.
 *
 * The lock is a kernel lock, not a pid file: `$PROMPTPIPE_STATE_DIR/promptpipe.lock` is a tiny SQLite database that
 * the holder opens in exclusive locking mode and writes once, so SQLite keeps an exclusive POSIX lock (fcntl) on it
 * for as long as the connection is open. The kernel drops that lock when the process dies, however it dies (SIGKILL,
 * OOM, power loss: the file is not locked after a reboot), so a stale lock cannot exist. A pid file could not tell a
 * dead holder from a live one in a container, where a restarted server gets the same pid (often 1) as the one that
 * crashed, nor from a zombie or a reused pid. SQLite's own locking through better-sqlite3 needs no new native package
 * (Node itself has no flock), and it also arbitrates between connections inside one process.
 *
 * `promptpipe.lock.holder` names the holder (pid, host, since when) for the refusal's message only; nothing trusts
 * it. The lock file itself is never deleted: a process that opened it just before an unlink would lock an orphaned
 * inode while a third process locked a new file, and both would believe they held the directory.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { AppError } from '../../domain/errors.ts';

export const STATE_DIR_LOCK_FILE = 'promptpipe.lock';
export const STATE_DIR_LOCK_HOLDER_FILE = 'promptpipe.lock.holder';

export interface StateDirLock {
  readonly path: string;
  /** Releases the lock (closes its connection). Idempotent. */
  release(): void;
}

export interface StateDirHolder {
  pid: number;
  hostname: string;
  acquired_at: string;
  /** Where the holder's HTTP API answers, once `promptpipe serve` is listening (for CLI commands beside it). */
  api_url?: string;
}
type Holder = StateDirHolder;

function readHolder(path: string): Holder | undefined {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as Partial<Holder>;
    if (typeof value.pid !== 'number') return undefined;
    return {
      pid: value.pid,
      hostname: String(value.hostname ?? ''),
      acquired_at: String(value.acquired_at ?? ''),
      ...(typeof value.api_url === 'string' ? { api_url: value.api_url } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Who holds the state directory, as its holder file says (informative: the lock itself is the kernel's). */
export function readStateDirHolder(stateDir: string): StateDirHolder | undefined {
  return readHolder(join(stateDir, STATE_DIR_LOCK_HOLDER_FILE));
}

/**
 * Versions before the kernel lock wrote `promptpipe.lock` as a JSON pid file, which SQLite refuses as "not a
 * database". Such a file is not a lock any more: it is removed, unless it names another live process on this host (an
 * older version still running here). It is read only after SQLite refused it: reading (then closing) a file this
 * process holds a POSIX lock on would drop that lock.
 */
function clearLegacyPidFile(path: string, stateDir: string, pid: number): void {
  const legacy = readHolder(path);
  const sameHost = legacy === undefined || legacy.hostname === '' || legacy.hostname === hostname();
  if (legacy && sameHost && legacy.pid !== pid && isProcessAlive(legacy.pid)) {
    throw inUse(stateDir, path, legacy);
  }
  rmSync(path, { force: true });
}

/** Signal 0 checks existence: ESRCH = no such process; EPERM = alive, owned by someone else. */
function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function inUse(stateDir: string, lockPath: string, holder: Holder | undefined): AppError {
  const who = holder
    ? `pid ${holder.pid}${holder.hostname && holder.hostname !== hostname() ? ` on host ${holder.hostname}` : ''}, ` +
      `since ${holder.acquired_at}`
    : 'its pid is not known';
  return new AppError(
    'conflict',
    `the state directory ${stateDir} is in use by another PromptPipe process (${who}). SQLite allows one process ` +
      'per state directory: stop that process, or use PostgreSQL (DATABASE_URL) to run several instances. The lock ' +
      'is held by the operating system and ends with that process; there is no file to delete.',
    { details: { ...(holder ? { holder_pid: holder.pid } : {}), lock_file: lockPath } },
  );
}

function isSqliteError(error: unknown, prefix: string): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith(prefix);
}

/** Opens the lock database and takes its exclusive lock, kept until the connection closes. */
function lockExclusively(path: string, pid: number): Database.Database {
  const connection = new Database(path, { timeout: 0 });
  try {
    connection.pragma('locking_mode = EXCLUSIVE');
    connection.pragma('journal_mode = DELETE');
    // The first write takes the EXCLUSIVE lock; in exclusive locking mode it is kept after the commit.
    connection.exec('BEGIN EXCLUSIVE');
    connection.exec('CREATE TABLE IF NOT EXISTS lock_holder (pid INTEGER NOT NULL, acquired_at TEXT NOT NULL)');
    connection.exec('DELETE FROM lock_holder');
    connection.prepare('INSERT INTO lock_holder (pid, acquired_at) VALUES (?, ?)').run(pid, new Date().toISOString());
    connection.exec('COMMIT');
    return connection;
  } catch (error) {
    connection.close();
    throw error;
  }
}

/** Takes the state directory's lock or throws `AppError('conflict')` naming the process that holds it. */
export function acquireStateDirLock(stateDir: string, options: { pid?: number } = {}): StateDirLock {
  const path = join(stateDir, STATE_DIR_LOCK_FILE);
  const holderPath = join(stateDir, STATE_DIR_LOCK_HOLDER_FILE);
  const pid = options.pid ?? process.pid;
  let connection: Database.Database | undefined;
  for (let attempt = 0; connection === undefined; attempt += 1) {
    try {
      connection = lockExclusively(path, pid);
    } catch (error) {
      if (isSqliteError(error, 'SQLITE_BUSY')) throw inUse(stateDir, path, readHolder(holderPath));
      if (attempt > 0 || !isSqliteError(error, 'SQLITE_NOTADB')) throw error;
      clearLegacyPidFile(path, stateDir, pid);
    }
  }
  const holder: Holder = { pid, hostname: hostname(), acquired_at: new Date().toISOString() };
  writeFileSync(holderPath, JSON.stringify(holder));
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    process.off('exit', release);
    // Still holding the lock here, so no other process can have written its own holder file yet.
    rmSync(holderPath, { force: true });
    connection.close();
  };
  process.on('exit', release);
  return { path, release };
}

/**
 * Adds the server's API address to the holder file of the directory this process holds, so CLI commands beside it
 * can reach it (`promptpipe participants enroll` while the server runs). Does nothing for a directory held by
 * another process.
 */
export function announceStateDirServer(stateDir: string, apiUrl: string): void {
  const holder = readStateDirHolder(stateDir);
  if (holder?.pid !== process.pid) return;
  writeFileSync(join(stateDir, STATE_DIR_LOCK_HOLDER_FILE), JSON.stringify({ ...holder, api_url: apiUrl }));
}
