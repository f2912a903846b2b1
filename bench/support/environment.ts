/** The machine and runtime a run measured, printed above the results so numbers are never read without them. */
import os from 'node:os';
import { startCommand } from '../../scripts/start-command.ts';
import type { RunProfile, StoreTarget } from './benchmark.ts';

/** `label: value` lines describing the run. */
export function describeEnvironment(profile: RunProfile, targets: readonly StoreTarget[]): string[] {
  const cpus = os.cpus();
  const gibibytes = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  return [
    `date: ${new Date().toISOString()}`,
    `node: ${process.version} (V8 ${process.versions.v8}), ${process.platform}/${process.arch}, ${os.type()} ${os.release()}`,
    `cpu: ${os.availableParallelism()} available (${cpus.length} logical), ${cpus[0]?.model.trim() ?? 'unknown model'}`,
    `memory: ${gibibytes(os.totalmem())} total, ${gibibytes(os.freemem())} free`,
    ...targets.map((target) => `store ${target.name}: ${target.description}`),
    `server (end to end, burst): ${serverLine()}`,
    `mode: ${profile.mode} (${profile.timeBudgetMs} ms per benchmark after ${profile.warmupIterations} warm-up iterations)`,
  ];
}

/** How the end-to-end and burst benchmarks start the server: npm start's variables (as set for this run) and flags. */
function serverLine(): string {
  const { environment, nodeArguments } = startCommand();
  const variables = Object.entries(environment).map(([name, value]) => `${name}=${value}`);
  return [...variables, 'node', ...nodeArguments].join(' ');
}
