/**
 * The real `promptpipe serve` process for the end-to-end benchmarks, started exactly as `npm start` starts it (the
 * bundled build, `node dist/bundle/main.js serve`, built first) with the environment given, and its memory read from
 * `/proc/<pid>/status`.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startCommand } from '../../scripts/start-command.ts';
import { createHttpClient } from '../../src/http/http-client.ts';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const START_TIMEOUT_MS = 60_000;

let built = false;
/** `npm run build` (what `npm start` runs first), once per benchmark run. */
function buildOnce(): void {
  if (built) return;
  execFileSync(process.execPath, ['scripts/build.ts'], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
  built = true;
}

export interface ServerProcess {
  readonly baseUrl: string;
  readonly pid: number;
  /** Resident memory now, in MiB (`VmRSS`). */
  rssMiB(): number;
  /** The highest resident memory since the process started, in MiB (`VmHWM`). */
  peakRssMiB(): number;
  /** CPU time the process used so far, all threads, user + system, in seconds (`/proc/<pid>/stat`). */
  cpuSeconds(): number;
  /** POSTs JSON; rejects on a non-2xx answer. */
  post(path: string, body: unknown): Promise<unknown>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/** A port nobody listens on right now. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

function statusFieldMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match?.[1]) throw new Error(`no ${field} for process ${pid}`);
  return Number(match[1]) / 1024;
}

/** Linux counts process CPU time in clock ticks of 1/100 s (USER_HZ). */
const TICKS_PER_SECOND = 100;

function cpuSecondsOf(pid: number): number {
  // The fields after the command name (which may contain spaces) start at the state: utime and stime are the 12th
  // and 13th of them.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

async function waitUntilHealthy(baseUrl: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${stderr()}`);
    try {
      const response = await fetch(`${baseUrl}/health`);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the server did not become healthy within ${START_TIMEOUT_MS / 1000} s:\n${stderr()}`);
}

export interface ServerProcessOptions {
  /** Profile the server's CPU (`--cpu-prof`): Node writes the profile into this directory when the server exits. */
  readonly cpuProfileDirectory?: string;
}

/** Node options for the server: PROMPTPIPE_BENCH_SERVER_NODE_OPTIONS, and `--cpu-prof` when asked for. */
function serverNodeOptions(options: ServerProcessOptions): string | undefined {
  const parts = [
    // Profiling the measured server by hand: e.g. PROMPTPIPE_BENCH_SERVER_NODE_OPTIONS="--heap-prof".
    process.env.PROMPTPIPE_BENCH_SERVER_NODE_OPTIONS,
    options.cpuProfileDirectory ? `--cpu-prof --cpu-prof-dir=${options.cpuProfileDirectory}` : undefined,
  ].filter((part): part is string => Boolean(part));
  return parts.length > 0 ? parts.join(' ') : undefined;
}

export async function startServerProcess(
  environment: Record<string, string>,
  options: ServerProcessOptions = {},
): Promise<ServerProcess> {
  buildOnce();
  const port = await freePort();
  const nodeOptions = serverNodeOptions(options);
  // The command `npm start` runs (package.json): its variables, then `node <flags> dist/bundle/main.js serve`, so the
  // benchmarks measure the server as it is started.
  const start = startCommand();
  const child = spawn(process.execPath, start.nodeArguments, {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      // Measured as configured here, not by a developer's .env.
      PROMPTPIPE_ENV_FILE: '',
      ...start.environment,
      ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
      ...environment,
      API_ADDR: `127.0.0.1:${port}`,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-8_000);
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitUntilHealthy(baseUrl, child, () => stderr);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const pid = child.pid ?? 0;
  // No limit on waiting: `POST /admin/clock` answers once every job it made due has run (minutes for a burst of
  // 100,000 prompts), past undici's default five-minute headers timeout.
  const http = createHttpClient({ headersTimeoutMs: 0, bodyTimeoutMs: 0 });
  return {
    baseUrl,
    pid,
    rssMiB: () => statusFieldMiB(pid, 'VmRSS'),
    peakRssMiB: () => statusFieldMiB(pid, 'VmHWM'),
    cpuSeconds: () => cpuSecondsOf(pid),
    async post(path, body) {
      const response = await http.fetch(`${baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${text}`);
      return text ? JSON.parse(text) : undefined;
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      await http.close();
    },
  };
}
