/**
 * `npm run bench`: measures PromptPipe's own performance (store operations, a full conversation turn, the job
 * runner) on file-backed SQLite and, when a URL is configured, PostgreSQL. Prints the environment, then a Markdown
 * table: iterations, operations per second, p50/p95/p99 latency and item throughput.
 *
 * Progress goes to stderr, the environment and the table to stdout. Exits 1 only when something failed (a bad
 * option, an unreachable database, a benchmark that threw), never because a number is slow.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BENCHMARKS } from './benchmarks.ts';
import { formatDashboardTable, runDashboardPages } from './dashboard/dashboard-pages.ts';
import { databaseLabel } from './e2e/bench-database.ts';
import { summarizeProfileDirectory } from './e2e/cpu-profile.ts';
import { type EndToEndResult, runEndToEndTurns } from './e2e/end-to-end-turns.ts';
import { type BurstResult, runPromptBurst } from './e2e/prompt-burst.ts';
import { formatBurstTable, formatCpuProfileTable, formatEndToEndTable } from './e2e/report.ts';
import type { ServerProcessOptions } from './e2e/server-process.ts';
import { burstRuns, serverDatabases } from './e2e/server-scenarios.ts';
import { FULL_SOAK, formatSoak, QUICK_SOAK, runServerSoak } from './soak/server-soak.ts';
import type { BenchmarkResult, StoreTarget } from './support/benchmark.ts';
import { describeEnvironment } from './support/environment.ts';
import { type BenchOptions, parseBenchOptions, USAGE } from './support/options.ts';
import { formatResultsTable } from './support/report.ts';
import { postgresTarget, postgresUrlFromEnvironment, sqliteTarget } from './support/store-targets.ts';

function errorText(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** SQLite always; PostgreSQL when a URL is set (connecting now, so a bad URL fails before anything runs). */
async function storeTargets(options: BenchOptions): Promise<StoreTarget[]> {
  const targets = [sqliteTarget(options.sqliteDirectory)];
  const postgresUrl = postgresUrlFromEnvironment();
  if (postgresUrl) targets.push(await postgresTarget(postgresUrl));
  else process.stderr.write('PostgreSQL benchmarks skipped: PROMPTPIPE_BENCH_PG_URL is not set\n');
  return targets;
}

/** Runs every selected benchmark on every target; returns the results and how many benchmarks failed. */
async function runBenchmarks(
  options: BenchOptions,
  targets: readonly StoreTarget[],
): Promise<{ results: BenchmarkResult[]; failures: number }> {
  const results: BenchmarkResult[] = [];
  let failures = 0;
  const filter = options.filter?.toLowerCase();
  for (const target of targets) {
    for (const benchmark of BENCHMARKS) {
      const name = `${target.name}: ${benchmark.name}`;
      if (filter && !name.toLowerCase().includes(filter)) continue;
      process.stderr.write(`running ${name} … `);
      const start = performance.now();
      try {
        const measurement = await benchmark.run({ target, profile: options.profile });
        results.push({ name, ...measurement });
        process.stderr.write(`${((performance.now() - start) / 1000).toFixed(1)} s\n`);
      } catch (error) {
        failures += 1;
        process.stderr.write(`FAILED\n${errorText(error)}\n`);
      }
    }
  }
  return { results, failures };
}

/** Names of the end-to-end rows, for `--filter`. */
const END_TO_END_NAME = 'end to end';
const BURST_NAME = 'prompt burst';
const DASHBOARD_NAME = 'dashboard';

/**
 * The benchmarks through the public interface: the real server process with an instant fake model and a local
 * gateway, on SQLite and, when a URL is set, on PostgreSQL with one and with two instances (alternated, so the
 * figures side by side were measured under the same load of the machine). They run after the store benchmarks.
 */
async function runEndToEnd(options: BenchOptions): Promise<{ tables: string[]; ran: number; failures: number }> {
  const filter = options.filter?.toLowerCase();
  const selected = (name: string) => !filter || name.includes(filter) || filter.includes(name);
  const tables: string[] = [];
  let ran = 0;
  let failures = 0;
  const attempt = async <T>(name: string, run: () => Promise<T>): Promise<T | undefined> => {
    ran += 1;
    process.stderr.write(`running ${name} … `);
    const start = performance.now();
    try {
      const result = await run();
      process.stderr.write(`${((performance.now() - start) / 1000).toFixed(1)} s\n`);
      return result;
    } catch (error) {
      failures += 1;
      process.stderr.write(`FAILED\n${errorText(error)}\n`);
      return undefined;
    }
  };
  /** With --cpu-profile: a directory for the server's profile, and its summary once the server has exited. */
  const profiles: string[] = [];
  const profiled = async <T>(name: string, run: (server: ServerProcessOptions) => Promise<T>): Promise<T> => {
    if (!options.cpuProfile) return run({});
    const directory = await mkdtemp(join(tmpdir(), 'promptpipe-bench-profile-'));
    const result = await run({ cpuProfileDirectory: directory });
    profiles.push(formatCpuProfileTable(name, summarizeProfileDirectory(directory)));
    process.stderr.write(`  the server's CPU profile (for Chrome DevTools): ${directory}\n`);
    return result;
  };
  const databases = serverDatabases(options.servers, postgresUrlFromEnvironment());
  if (selected(END_TO_END_NAME)) {
    const results: EndToEndResult[] = [];
    for (const participants of [1, 50]) {
      for (const database of databases) {
        const name = `${databaseLabel(database)}: ${END_TO_END_NAME}, ${participants} participant(s)`;
        const result = await attempt(name, () =>
          profiled(name, (server) => runEndToEndTurns(participants, options.profile, server, database)),
        );
        if (result) results.push(result);
      }
    }
    if (results.length > 0) tables.push(formatEndToEndTable(results));
  }
  if (selected(BURST_NAME)) {
    const results: BurstResult[] = [];
    for (const run of burstRuns(databases, options)) {
      const name = `${databaseLabel(run.database)}: ${BURST_NAME}, ${run.participants} participants`;
      const result = await attempt(name, () =>
        profiled(name, (server) => runPromptBurst(run.participants, server, run.database)),
      );
      if (result) results.push(result);
    }
    if (results.length > 0) tables.push(formatBurstTable(results));
  }
  if (selected(DASHBOARD_NAME)) {
    const shape = {
      participants: options.dashboardParticipants ?? (options.profile.mode === 'quick' ? 1_000 : 10_000),
      days: options.dashboardDays,
      start: new Date('2026-03-02T00:00:00.000Z'),
    };
    const name = `${DASHBOARD_NAME} pages, ${shape.participants} participants × ${shape.days} days`;
    process.stderr.write('\n');
    const results = await attempt(name, () =>
      runDashboardPages({
        shape,
        runs: options.profile.mode === 'quick' ? 3 : 9,
        pages: options.dashboardPages,
        postgresUrl: postgresUrlFromEnvironment(),
        log: (line) => process.stderr.write(`${line}\n`),
      }),
    );
    if (results) tables.push(formatDashboardTable(shape, results));
  }
  return { tables: [...tables, ...profiles], ran, failures };
}

async function main(): Promise<number> {
  let options: BenchOptions;
  try {
    options = parseBenchOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    return 1;
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const start = performance.now();
  const targets = await storeTargets(options);
  process.stdout.write(`${describeEnvironment(options.profile, targets).join('\n')}\n\n`);
  const { results, failures: benchmarkFailures } = await runBenchmarks(options, targets);
  const endToEnd = await runEndToEnd(options);
  let failures = benchmarkFailures + endToEnd.failures;
  // The soak (the real server's memory over thousands of turns) runs last, unless a filter leaves it out.
  const soakSelected = !options.filter || 'server soak'.includes(options.filter.toLowerCase());
  let soak: string | undefined;
  if (soakSelected) {
    process.stderr.write('running the server soak …\n');
    try {
      const result = await runServerSoak(options.profile.mode === 'quick' ? QUICK_SOAK : FULL_SOAK, (line) =>
        process.stderr.write(`${line}\n`),
      );
      soak = formatSoak(result);
    } catch (error) {
      failures += 1;
      process.stderr.write(`server soak FAILED\n${errorText(error)}\n`);
    }
  }
  if (results.length === 0 && endToEnd.ran === 0 && failures === 0 && !soak) {
    process.stderr.write(`no benchmark matches --filter "${options.filter ?? ''}"\n`);
    return 1;
  }
  if (results.length > 0) process.stdout.write(`${formatResultsTable(results)}\n`);
  for (const table of endToEnd.tables) process.stdout.write(`\n${table}\n`);
  if (soak) process.stdout.write(`\n${soak}\n`);
  process.stdout.write(`\ntotal ${((performance.now() - start) / 1000).toFixed(1)} s`);
  process.stdout.write(failures > 0 ? `, ${failures} benchmark(s) FAILED\n` : '\n');
  return failures > 0 ? 1 : 0;
}

main().then(
  (exitCode) => {
    process.exitCode = exitCode;
  },
  (error: unknown) => {
    process.stderr.write(`benchmark run failed: ${errorText(error)}\n`);
    process.exitCode = 1;
  },
);
