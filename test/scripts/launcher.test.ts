/**
 * The README's set-up on a machine whose own Node is too old: `./promptpipe` brings Node 24 (scripts/use-node.sh) and
 * the dependencies, then runs the command; npm's scripts on the old Node say what is needed instead of failing on a
 * `.ts` import.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/server-process.ts';

const VERSION = (JSON.parse(readFileSync(`${REPO_ROOT}package.json`, 'utf8')) as { version: string }).version;
const systemNode = ['/usr/bin/node', '/usr/local/bin/node'].find((path) => existsSync(path));
const systemNodeVersion = systemNode
  ? spawnSync(systemNode, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim()
  : '';
const [major = 0, minor = 0] = systemNodeVersion.split('.').map(Number);
const systemNodeTooOld = systemNode !== undefined && (major < 22 || (major === 22 && minor < 18));
if (!systemNodeTooOld) {
  console.warn(
    `SKIPPING the old-Node launcher checks: the machine's Node (${systemNodeVersion || 'none'}) is not older than 22.18`,
  );
}

describe.skipIf(!systemNodeTooOld)('on a machine whose Node is older than 22.18', () => {
  const oldPath = `${systemNode?.replace(/\/node$/, '')}:/usr/bin:/bin`;

  // Up to a Node download and an `npm ci` when the checkout has neither yet.
  it('./promptpipe runs a CLI command with the Node 24 it brings', { timeout: 300_000 }, () => {
    const run = spawnSync('./promptpipe', ['--version'], {
      cwd: REPO_ROOT,
      env: { PATH: oldPath, HOME: process.env.HOME ?? '/tmp' },
      encoding: 'utf8',
      timeout: 280_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(VERSION);
  });

  it("npm's scripts name the Node they need and how to get it", () => {
    const run = spawnSync(systemNode as string, ['scripts/check-node.cjs'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`this is Node ${systemNodeVersion}`);
    expect(run.stderr).toContain('./promptpipe');
    const bin = spawnSync(systemNode as string, ['bin/promptpipe.js', '--version'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(bin.status).toBe(1);
    expect(bin.stderr).toContain('PromptPipe needs Node.js 22.18 or newer');
    expect(bin.stderr).not.toContain('ERR_UNKNOWN_FILE_EXTENSION');
  });
});
