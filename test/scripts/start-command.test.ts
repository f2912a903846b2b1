import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseStartCommand, startCommand } from '../../scripts/start-command.ts';

const START = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }
).scripts.start;

/** What `sh` (npm's script shell) sets when it runs the script's assignments before a command: here `env`. */
function shellEnvironment(script: string, environment: Record<string, string>): Record<string, string> {
  const assignments = script.slice(0, script.indexOf('node '));
  const output = execFileSync('/bin/sh', ['-c', `${assignments} env`], {
    env: { PATH: process.env.PATH ?? '', ...environment },
    encoding: 'utf8',
  });
  return Object.fromEntries(
    output
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

describe("npm start's command line", () => {
  it('limits glibc to two malloc arenas unless the caller chose a number, as sh would run it', () => {
    for (const given of [{}, { MALLOC_ARENA_MAX: '' }, { MALLOC_ARENA_MAX: '8' }]) {
      const parsed = parseStartCommand(START, given);
      const shell = shellEnvironment(START, given);
      expect(parsed.environment.MALLOC_ARENA_MAX).toBe(shell.MALLOC_ARENA_MAX);
    }
    expect(startCommand({}).environment).toEqual({ MALLOC_ARENA_MAX: '2' });
    expect(startCommand({ MALLOC_ARENA_MAX: '8' }).environment).toEqual({ MALLOC_ARENA_MAX: '8' });
  });

  it('runs the bundled server with node and its flags', () => {
    const { nodeArguments } = startCommand({});
    expect(nodeArguments.slice(-2)).toEqual(['dist/bundle/main.js', 'serve']);
    expect(nodeArguments).not.toContain('node');
  });

  it('reads plain assignments and refuses what it does not understand instead of guessing', () => {
    expect(parseStartCommand('A=1 B=two exec node x.js', {})).toEqual({
      environment: { A: '1', B: 'two' },
      nodeArguments: ['x.js'],
    });
    expect(() => parseStartCommand('A=$HOME exec node x.js', {})).toThrow(/not a form/);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, not a template literal
    expect(() => parseStartCommand('A=${B:-1} exec node x.js', {})).toThrow(/another variable/);
    expect(() => parseStartCommand('A=1 exec tsx x.ts', {})).toThrow(/does not run node/);
    // Without exec a signal to npm would not reach the server.
    expect(() => parseStartCommand('A=1 node x.js', {})).toThrow(/must exec node/);
  });
});
