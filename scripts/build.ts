/**
 * `npm run build` (and so `npm start`): compiles `src/` to `dist/` with `tsc -p tsconfig.build.json` (incremental:
 * nothing is rewritten when nothing changed). Builds are serialised by a lock directory, so several `npm start`s
 * launched together (several instances on one machine) never load files another build is still writing: each waits
 * for the build before it, then finds the output up to date.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LOCK = join(ROOT, 'dist', '.build.lock');
const WAIT_MS = 120_000;
/** A lock without its pid file this long after it was made belongs to a build that died in between. */
const PID_GRACE_MS = 10_000;

function holderAlive(): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
  } catch {
    try {
      return Date.now() - statSync(LOCK).mtimeMs < PID_GRACE_MS;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function acquire(): void {
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (!holderAlive()) {
      rmSync(LOCK, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`another build has held ${LOCK} for over ${WAIT_MS / 1000} s`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
  }
}

acquire();
try {
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: ROOT,
      stdio: 'inherit',
    },
  );
} catch {
  // tsc has printed the errors.
  process.exitCode = 1;
} finally {
  rmSync(LOCK, { recursive: true, force: true });
}
