/**
 * Real `promptpipe serve` processes for end-to-end tests (spawned with `node src/cli/main.ts serve`): start on a free
 * port and wait for `/health`, collect the output for failure messages, stop gracefully (SIGTERM) or kill (SIGKILL).
 * Stopping or killing one also checks that no credential it was started with appears in what it wrote.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { waitUntil } from './wait-until.ts';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  /** The environment it was started with: its credentials must never appear in `output`. */
  env: Record<string, string>;
  baseUrl: string;
  /** stdout and stderr, interleaved as they arrived. */
  output: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited: boolean;
}

export type ServerExit = Awaited<ServerProcess['exit']>;

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * Spawns `node src/cli/main.ts <args>` (default `serve`) with exactly `env`, and no settings file (`PROMPTPIPE_ENV_FILE`
 * empty unless `env` names one): a developer's `.env` in the repository never reaches a test server.
 */
export function spawnServer(env: Record<string, string>, args: string[] = ['serve']): ServerProcess {
  const child = spawn(process.execPath, ['src/cli/main.ts', ...args], {
    cwd: REPO_ROOT,
    env: { PROMPTPIPE_ENV_FILE: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  const server: ServerProcess = {
    child,
    env,
    baseUrl: `http://${env.API_ADDR}`,
    output,
    exited: false,
    // 'close' comes after the output streams ended, so the output is complete by then.
    exit: new Promise((resolve) => {
      child.once('error', (error) => {
        output.push(`spawn error: ${error.message}\n`);
        server.exited = true;
        resolve({ code: null, signal: null });
      });
      child.once('close', (code, signal) => {
        server.exited = true;
        resolve({ code, signal });
      });
    }),
  };
  return server;
}

export function describeOutput(server: ServerProcess | undefined, label = 'promptpipe serve'): string {
  if (!server) return '(no server process)';
  const text = server.output.join('');
  return `--- ${label} output (${server.exited ? 'exited' : 'running'}) ---\n${text || '(nothing)\n'}--- end ---`;
}

/**
 * `waitUntil` (wait-until.ts) for tests of server processes: fails at once, with the server's output, when one of
 * `servers` died, since nothing it was expected to do will happen any more.
 */
export function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 15_000,
  servers: readonly (ServerProcess | undefined)[] = [],
  pollMs = 25,
): Promise<NonNullable<T>> {
  return waitUntil(what, check, {
    timeoutMs,
    intervalMs: pollMs,
    stopIf: () => {
      const deadServer = servers.find((server) => server?.exited);
      return deadServer && new Error(`a server exited while waiting for ${what}\n${describeOutput(deadServer)}`);
    },
  });
}

/**
 * Whether `GET /health` at `baseUrl` is answered by THIS process: its `instance_id` (`PROMPTPIPE_INSTANCE_ID`, else
 * the server's default `<hostname>-<pid>`). Tests running in parallel pick free ports independently; between the
 * probe and the bind, another test's server can take the port, and its 200 must not be mistaken for ours.
 */
export async function answersAsItself(
  baseUrl: string,
  child: ChildProcess,
  instanceId: string | undefined,
): Promise<boolean> {
  const response = await fetch(`${baseUrl}/health`).catch(() => undefined);
  if (response?.status !== 200) return false;
  const body = (await response.json().catch(() => ({}))) as { instance_id?: string };
  return body.instance_id === (instanceId ?? `${hostname()}-${child.pid}`);
}

/** Starts `promptpipe serve` on a free port and waits for `GET /health`; retries when the port was taken meanwhile. */
export async function startServer(baseEnv: Record<string, string>, timeoutMs = 20_000): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt += 1) {
    const server = spawnServer({ ...baseEnv, API_ADDR: `127.0.0.1:${await freePort()}` });
    try {
      await waitFor(
        'GET /health to answer 200 from this process',
        () => answersAsItself(server.baseUrl, server.child, baseEnv.PROMPTPIPE_INSTANCE_ID),
        timeoutMs,
        [server],
      );
      return server;
    } catch (error) {
      if (!server.exited) server.child.kill('SIGKILL');
      await server.exit;
      if (attempt < 3 && server.output.join('').includes('EADDRINUSE')) continue;
      const message = (error as Error).message;
      // waitFor already shows the output when the process died; a timeout does not.
      throw new Error(
        message.includes('--- promptpipe serve output') ? message : `${message}\n${describeOutput(server)}`,
      );
    }
  }
}

/**
 * SIGTERM, then SIGKILL after `graceMs`; resolves with how the process ended. Throws when the output holds one of the
 * credentials the process was started with (`assertNoSecretsInOutput`).
 */
export async function stopServer(server: ServerProcess, graceMs = 15_000): Promise<ServerExit> {
  if (!server.exited) server.child.kill('SIGTERM');
  const timeout = setTimeout(() => server.child.kill('SIGKILL'), graceMs);
  let exit: ServerExit;
  try {
    exit = await server.exit;
  } finally {
    clearTimeout(timeout);
  }
  assertNoSecretsInOutput(server);
  return exit;
}

/** SIGKILL (no graceful shutdown: a crash), then waits for the exit; checks the output as `stopServer` does. */
export async function killServer(server: ServerProcess): Promise<void> {
  if (!server.exited) server.child.kill('SIGKILL');
  await server.exit;
  assertNoSecretsInOutput(server);
}

/** Settings that hold a credential: a name with the word TOKEN, SECRET, KEY, PASSWORD or AUTH (not `LLM_MAX_TOKENS`). */
const CREDENTIAL_SETTING = /(^|_)(TOKEN|SECRET|KEY|PASSWORD|AUTH)(_|$)/;
/** Shorter values (`verify`, `test`) are words a log may contain for other reasons. */
const MIN_SECRET_LENGTH = 8;

/** The credentials in a process environment, by setting name; a password inside a URL setting counts too. */
export function credentialsIn(env: Record<string, string | undefined>): Map<string, string> {
  const credentials = new Map<string, string>();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (CREDENTIAL_SETTING.test(name) && value.length >= MIN_SECRET_LENGTH) credentials.set(name, value);
    const password = URL.canParse(value) ? decodeURIComponent(new URL(value).password) : '';
    if (password.length >= MIN_SECRET_LENGTH) credentials.set(`${name} (password)`, password);
  }
  return credentials;
}

/**
 * Throws when what a process wrote (its log) holds a credential of the environment it was started with, naming the
 * setting and the lines (the value shown as `<NAME>`). Called by `stopServer`/`killServer`; tests that spawn a
 * process themselves call it on their own `{ env, output }`.
 */
export function assertNoSecretsInOutput(server: {
  env: Record<string, string | undefined>;
  output: readonly string[];
}): void {
  const lines = server.output.join('').split('\n');
  const leaks: string[] = [];
  for (const [name, value] of credentialsIn(server.env)) {
    const leaking = lines.filter((line) => line.includes(value)).map((line) => line.replaceAll(value, `<${name}>`));
    if (leaking.length > 0) leaks.push(`${name} appears in ${leaking.length} line(s):\n${leaking.join('\n')}`);
  }
  if (leaks.length > 0) throw new Error(`credentials leaked into the server's output:\n${leaks.join('\n')}`);
}
