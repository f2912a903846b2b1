/**
 * What the command line says: a mistyped command is named as unknown with the nearest one suggested (not swallowed by
 * `serve`), the import's help lists every column it accepts, and an import prints its summary (the whole outcome as
 * JSON only with --json).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type CliIo, runCli } from '../../src/cli/cli.ts';
import { IMPORT_COLUMNS } from '../../src/research/import/import-input.ts';

function capture() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  let code: number | undefined;
  stdout.on('data', (chunk) => (out += String(chunk)));
  stderr.on('data', (chunk) => (err += String(chunk)));
  const io: CliIo = {
    stdin: new PassThrough(),
    stdout,
    stderr,
    onSignal: () => undefined,
    exit: (exitCode) => {
      code ??= exitCode;
    },
  };
  return { io, out: () => out, err: () => err, code: () => code };
}

const stateDir = mkdtempSync(join(tmpdir(), 'promptpipe-cli-words-'));
const previous = { ...process.env };
afterEach(() => {
  process.env = { ...previous };
});
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

describe('promptpipe command words', () => {
  it('names an unknown command and suggests the nearest one instead of starting serve', async () => {
    const run = capture();
    await runCli(['participant', 'list'], run.io);
    expect(run.err()).toContain("unknown command 'participant'");
    expect(run.err()).toContain('Did you mean participants?');
    expect(run.err()).not.toContain("too many arguments for 'serve'");
    expect(run.code()).not.toBe(0);

    const sub = capture();
    await runCli(['participants', 'lst'], sub.io);
    expect(sub.err()).toContain("unknown command 'lst'");
    expect(sub.err()).toContain('Did you mean list?');
  });

  it("lists every column the import accepts in the import's help", async () => {
    const run = capture();
    await runCli(['participants', 'import', '--help'], run.io);
    expect(run.code()).toBe(0);
    const help = run.out().replace(/\s+/g, ' ');
    for (const column of IMPORT_COLUMNS) expect(help).toContain(column);
    expect(help).toContain('language');
    expect(help).toContain('--json');
  });

  it('prints the import summary, and the whole outcome as JSON only with --json', async () => {
    Object.assign(process.env, { PROMPTPIPE_STATE_DIR: stateDir, LOG_LEVEL: 'info' });
    delete process.env.DATABASE_URL;
    delete process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_BASE_URL;
    const file = join(stateDir, 'people.csv');
    writeFileSync(file, 'phone_number,name,language\n+15550100021,Ada,es\n');
    const summary = capture();
    await runCli(['participants', 'import', file], summary.io);
    expect(summary.out()).toContain('1 enrolled, 0 skipped');
    expect(summary.out()).not.toContain('{');
    // The server's start-up warnings (no model, no webhook URL) are not the import's business.
    expect(summary.err()).toBe('');

    const json = capture();
    await runCli(['participants', 'import', file, '--json'], json.io);
    const outcome = JSON.parse(json.out()) as { skipped: unknown[]; enrolled: unknown[] };
    expect(outcome.enrolled).toEqual([]);
    expect(outcome.skipped).toHaveLength(1);
  });
});
