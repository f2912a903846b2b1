/**
 * Process managers and `docker stop` signal the first process, which with `npm start` is npm. SIGTERM to npm must
 * reach the server: it stops gracefully and no process of the tree (npm, a shell, node) is left behind.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, REPO_ROOT, waitFor } from '../support/server-process.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const step of cleanup) await step();
});

/** Every descendant of `pid` (children first), read from /proc. */
function descendants(pid: number): number[] {
  let children: number[];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
  return children.flatMap((child) => [child, ...descendants(child)]);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm start under a process manager', () => {
  it('stops the server gracefully when npm receives SIGTERM, leaving no process behind', {
    timeout: 180_000,
  }, async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-npm-start-'));
    const port = await freePort();
    const npm = spawn('npm', ['start'], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        PROMPTPIPE_ENV_FILE: '',
        PROMPTPIPE_STATE_DIR: stateDir,
        API_ADDR: `127.0.0.1:${port}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => npm.once('close', (code) => resolve(code)));
    let tree: number[] = [];
    cleanup.push(async () => {
      for (const pid of [...tree, npm.pid as number]) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
      await rm(stateDir, { recursive: true, force: true });
    });

    await waitFor(
      'npm start to serve /health',
      async () => {
        if (npm.exitCode !== null) throw new Error(`npm start exited:\n${output}`);
        return (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.status === 200;
      },
      150_000,
    );
    tree = descendants(npm.pid as number);
    const server = tree.find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('dist/bundle/main.js'));
    expect(server, `npm's process tree: ${tree.join(' ')}`).toBeDefined();

    npm.kill('SIGTERM');
    await exited;
    // The server shut down on the signal (its own graceful-stop log line), and nothing of the tree is left.
    expect(output).toMatch(/shutting down|stopped/i);
    await waitFor('every process of the tree to end', () => tree.every((pid) => !isAlive(pid)), 15_000);
    expect(tree.filter(isAlive)).toEqual([]);
  });
});
