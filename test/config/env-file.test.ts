/**
 * Where settings come from: the real environment over an optional `.env` file of the working directory, another file
 * named by PROMPTPIPE_ENV_FILE, or no file when it is set empty — so a developer's `.env` (a token, a model) never
 * reaches the test servers, which all start with PROMPTPIPE_ENV_FILE empty.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/server-process.ts';

const directory = mkdtempSync(join(tmpdir(), 'promptpipe-env-file-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
writeFileSync(join(directory, '.env'), 'PROMPTPIPE_API_TOKEN=from-the-dot-env\nGENAI_MODEL=model-from-dot-env\n');
writeFileSync(join(directory, 'other.env'), 'GENAI_MODEL=model-from-other\n');

/** The settings `readEnvironment` returns in a process started in `directory` with exactly `env`. */
function environmentIn(env: Record<string, string>): Record<string, string | undefined> {
  const script =
    `import { readEnvironment } from ${JSON.stringify(new URL('src/config.ts', `file://${REPO_ROOT}`).href)};` +
    'try { const e = readEnvironment(); process.stdout.write(JSON.stringify({ token: e.PROMPTPIPE_API_TOKEN, model: e.GENAI_MODEL })); }' +
    'catch (error) { process.stdout.write(JSON.stringify({ error: error.message })); }';
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: directory,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  return JSON.parse(child.stdout || '{}') as Record<string, string | undefined>;
}

describe('the settings file', () => {
  it('reads the working directory’s .env by default, the real environment winning', () => {
    expect(environmentIn({})).toEqual({ token: 'from-the-dot-env', model: 'model-from-dot-env' });
    expect(environmentIn({ GENAI_MODEL: 'from-env' })).toMatchObject({ model: 'from-env' });
  });

  it('reads no file when PROMPTPIPE_ENV_FILE is empty, and the named one otherwise', () => {
    expect(environmentIn({ PROMPTPIPE_ENV_FILE: '' })).toEqual({});
    expect(environmentIn({ PROMPTPIPE_ENV_FILE: 'other.env' })).toEqual({ model: 'model-from-other' });
  });

  it('refuses a named file that does not exist instead of silently running without it', () => {
    expect(environmentIn({ PROMPTPIPE_ENV_FILE: 'missing.env' }).error).toMatch(
      /PROMPTPIPE_ENV_FILE: missing\.env does not exist/,
    );
  });

  it('keeps the test run itself away from a developer’s .env', () => {
    expect(process.env.PROMPTPIPE_ENV_FILE).toBe('');
  });
});
