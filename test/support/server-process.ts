/**
 * The real `promptpipe serve` as a child process (`node src/cli/main.ts serve`), for tests that need a process to
 * kill or restart: spawn on a free port, wait for `GET /health`, keep the output for failure messages.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  /** stdout and stderr, interleaved as they arrived. */
  output: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited: boolean;
}

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

export function spawnServer(env: Record<string, string>): ServerProcess {
  const child = spawn(process.execPath, ['src/cli/main.ts', 'serve'], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  const server: ServerProcess = {
    child,
    baseUrl: `http://${env.API_ADDR}`,
    output,
    exited: false,
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

export function describeOutput(server: ServerProcess | undefined, lastChars = 6000): string {
  if (!server) return '(no server process)';
  const text = server.output.join('').slice(-lastChars);
  return `--- promptpipe serve output (${server.exited ? 'exited' : 'running'}) ---\n${text || '(nothing)\n'}--- end ---`;
}

/** Starts `promptpipe serve` on a free port and waits for `GET /health` 200; retries when the port was taken. */
export async function startServer(env: Record<string, string>, timeoutMs = 30_000): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt += 1) {
    const server = spawnServer({ ...env, API_ADDR: `127.0.0.1:${await freePort()}` });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = await fetch(`${server.baseUrl}/health`, { signal: AbortSignal.timeout(10_000) })
        .then((response) => response.status)
        .catch(() => undefined);
      if (status === 200) return server;
      if (server.exited || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (!server.exited) server.child.kill('SIGKILL');
    await server.exit;
    if (attempt < 3 && server.output.join('').includes('EADDRINUSE')) continue;
    throw new Error(`promptpipe serve did not become healthy\n${describeOutput(server)}`);
  }
}

/** SIGKILL, and resolves once the process is gone. */
export async function killServer(server: ServerProcess): Promise<void> {
  if (!server.exited) server.child.kill('SIGKILL');
  await server.exit;
}
