/**
 * `npm start`'s command line as package.json spells it, for what starts the server exactly as `npm start` does (the
 * end-to-end benchmarks, the compiled-server test): environment assignments first, as `sh` reads them
 * (`NAME=value`, or `NAME=${NAME:-default}`: the caller's value when set and not empty, else the default), then
 * `exec node` and its arguments. Only these forms are understood; anything else is an error, never a guess.
 *
 * `exec` is required: npm passes SIGTERM and SIGINT to its child, the shell running the script, and a shell that
 * forked node would die and leave the server running with no parent (dash does not replace itself with the last
 * command). With `exec` the server is that child, so `docker stop`, systemd or Ctrl-C reach it through npm.
 */
import { readFileSync } from 'node:fs';

export interface StartCommand {
  /** The variables the script sets, with the values `sh` would give them in `environment`. */
  environment: Record<string, string>;
  /** Everything after `node`: its flags, the entry point, `serve`. */
  nodeArguments: string[];
}

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;
const WITH_DEFAULT = /^\$\{([A-Za-z_][A-Za-z0-9_]*):-([^${}'"`\\]*)\}$/;
const PLAIN = /^[^${}'"`\\;&|<>()]*$/;

function assignedValue(name: string, raw: string, environment: NodeJS.ProcessEnv): string {
  const withDefault = WITH_DEFAULT.exec(raw);
  if (withDefault) {
    if (withDefault[1] !== name) throw new Error(`npm start: ${name}=${raw} defaults from another variable`);
    const given = environment[name];
    return given === undefined || given === '' ? (withDefault[2] as string) : given;
  }
  if (!PLAIN.test(raw)) throw new Error(`npm start: ${name}=${raw} is not a form this parser understands`);
  return raw;
}

export function parseStartCommand(script: string, environment: NodeJS.ProcessEnv = process.env): StartCommand {
  const words = script.trim().split(/\s+/);
  const assigned: Record<string, string> = {};
  let index = 0;
  for (; index < words.length; index += 1) {
    const [, name, raw] = ASSIGNMENT.exec(words[index] as string) ?? [];
    if (name === undefined || raw === undefined) break;
    assigned[name] = assignedValue(name, raw, environment);
  }
  if (words[index] !== 'exec') throw new Error(`npm start must exec node, so that signals reach it: ${script}`);
  index += 1;
  if (words[index] !== 'node') throw new Error(`npm start does not run node: ${script}`);
  return { environment: assigned, nodeArguments: words.slice(index + 1) };
}

/** `parseStartCommand` of this repository's package.json. */
export function startCommand(environment: NodeJS.ProcessEnv = process.env): StartCommand {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    scripts: { start: string };
  };
  return parseStartCommand(manifest.scripts.start, environment);
}
