/** `promptpipe staff create` makes the first admin with a password read from standard input (never a flag). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliIo, runCli } from '../../src/cli/cli.ts';
import { verifyPassword } from '../../src/staff/passwords.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

const stateDir = mkdtempSync(join(tmpdir(), 'promptpipe-staff-cli-'));
const previous = { ...process.env };
afterAll(() => {
  process.env = previous;
  rmSync(stateDir, { recursive: true, force: true });
});

function io(input: string): CliIo & { out: () => string; err: () => string; code: () => number | undefined } {
  const stdin = new PassThrough();
  stdin.end(input);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  let code: number | undefined;
  stdout.on('data', (chunk) => {
    out += String(chunk);
  });
  stderr.on('data', (chunk) => {
    err += String(chunk);
  });
  return {
    stdin,
    stdout,
    stderr,
    onSignal: () => undefined,
    exit: (value) => {
      code = value;
    },
    out: () => out,
    err: () => err,
    code: () => code,
  };
}

describe('promptpipe staff create', () => {
  it('creates an admin whose password is stored hashed, and refuses a weak password without creating anything', async () => {
    process.env['PROMPTPIPE_STATE_DIR'] = stateDir;
    process.env['LOG_LEVEL'] = 'silent';
    delete process.env['DATABASE_URL'];
    const weak = io('short\n');
    await runCli(['staff', 'create', '--role', 'admin', '--email', 'pi@study.example', '--name', 'PI'], weak);
    expect(weak.code()).toBe(2);
    expect(weak.err()).toContain('at least 12 characters');

    const ok = io('a perfectly long passphrase\n');
    await runCli(['staff', 'create', '--role', 'admin', '--email', 'PI@Study.example', '--name', 'PI'], ok);
    expect(ok.code()).toBeUndefined();
    expect(ok.out()).toContain('created admin pi@study.example');

    const store = await createSqliteStore({ filename: join(stateDir, 'promptpipe.db') });
    try {
      const [user] = await store.staff.listUsers();
      expect(user).toMatchObject({ email: 'pi@study.example', role: 'admin' });
      expect(user?.passwordHash).toMatch(/^scrypt\$/);
      expect(user?.passwordHash).not.toContain('a perfectly long passphrase');
      expect(await verifyPassword('a perfectly long passphrase', user?.passwordHash ?? '')).toBe(true);
      const [audit] = await store.audit.list({ action: 'staff-created' }, 10);
      expect(audit).toMatchObject({ actor: 'command line', outcome: 'success' });
    } finally {
      await store.close();
    }
  });
});
