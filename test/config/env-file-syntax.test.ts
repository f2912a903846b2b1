/**
 * The settings file's syntax, read by Node's `util.parseEnv` (which replaced the dotenv package): every setting of
 * `.env.example`, uncommented, reads as written, and the dotenv syntax a deployment may use (quotes, comments, an
 * `export` prefix, a multi-line value) reads as dotenv read it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readEnvironment } from '../../src/config.ts';
import { REPO_ROOT } from '../support/server-process.ts';

const directory = mkdtempSync(join(tmpdir(), 'promptpipe-env-syntax-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** `readEnvironment` of a file with this text; only the file's own names (the real environment wins over it). */
function readFile(text: string): Record<string, string | undefined> {
  const path = join(directory, `settings-${Math.random().toString(36).slice(2)}.env`);
  writeFileSync(path, text);
  const read = readEnvironment(path);
  return Object.fromEntries(Object.entries(read).filter(([name]) => process.env[name] === undefined));
}

describe('the settings file', () => {
  it('reads every setting of .env.example, uncommented, as it is written there', () => {
    const example = readFileSync(join(REPO_ROOT, '.env.example'), 'utf8');
    const uncommented = example.replace(/^#([A-Z][A-Z0-9_]*=)/gm, '$1');
    const expected = new Map<string, string>();
    for (const line of uncommented.split('\n')) {
      const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
      if (match?.[1] && process.env[match[1]] === undefined) expected.set(match[1], (match[2] ?? '').trim());
    }
    expect(expected.size).toBeGreaterThan(50);
    const read = readFile(uncommented);
    for (const [name, value] of expected) expect({ name, value: read[name] }).toEqual({ name, value });
  });

  it('reads quotes, comments, an export prefix and multi-line values as dotenv did', () => {
    const read = readFile(
      [
        '# a comment line',
        'export EXPORTED=yes',
        'DOUBLE="two words # not a comment"',
        "SINGLE='no \\n escapes'",
        'ESCAPED="a\\nb"',
        'INLINE=value # a trailing comment',
        '  SPACED = padded  ',
        'MULTI="first',
        'second"',
        'EMPTY=',
        'TWICE=first',
        'TWICE=second',
      ].join('\n'),
    );
    expect(read).toEqual({
      EXPORTED: 'yes',
      DOUBLE: 'two words # not a comment',
      SINGLE: 'no \\n escapes',
      ESCAPED: 'a\nb',
      INLINE: 'value',
      SPACED: 'padded',
      MULTI: 'first\nsecond',
      EMPTY: '',
      TWICE: 'second',
    });
  });
});
