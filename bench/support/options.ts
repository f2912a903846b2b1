/** The command line of `npm run bench -- [--quick] [--filter <text>]`, and the run profiles it selects. */
import { parseArgs } from 'node:util';
import { SERVER_SETUPS, type ServerSetup } from '../e2e/server-scenarios.ts';
import type { RunProfile } from './benchmark.ts';

export interface BenchOptions {
  readonly profile: RunProfile;
  /** Only benchmarks whose row name contains this text (case-insensitive). */
  readonly filter: string | undefined;
  /** Where the SQLite benchmark databases are created; undefined: the system's temporary directory. */
  readonly sqliteDirectory: string | undefined;
  readonly help: boolean;
  /** Participants of the prompt-burst benchmark; undefined: the profile's default (100,000, or 2,000 with --quick). */
  readonly burstParticipants: number | undefined;
  /** Participants of the PostgreSQL bursts (and the SQLite one beside them); undefined: 10,000, or 500 with --quick. */
  readonly postgresBurstParticipants: number | undefined;
  /** The end-to-end and burst setups to run (`--servers`); undefined: all that can run. */
  readonly servers: readonly ServerSetup[] | undefined;
  /** Profile the end-to-end and burst servers' CPU and report where it went, by component. */
  readonly cpuProfile: boolean;
  /** The dashboard benchmark's study: participants (default 10,000, or 1,000 with --quick) and days (30). */
  readonly dashboardParticipants: number | undefined;
  readonly dashboardDays: number;
  /** Only these dashboard pages (names or parts of names); all when empty. */
  readonly dashboardPages: readonly string[];
}

/** The documented numbers: about 2.5 s of measurement per benchmark. */
export const FULL_PROFILE: RunProfile = {
  mode: 'full',
  timeBudgetMs: 2_500,
  maxIterations: 50_000,
  warmupIterations: 50,
  drainRounds: 5,
};

/** A smoke run: every benchmark, briefly. */
export const QUICK_PROFILE: RunProfile = {
  mode: 'quick',
  timeBudgetMs: 400,
  maxIterations: 5_000,
  warmupIterations: 10,
  drainRounds: 1,
};

export const USAGE = `Usage: npm run bench -- [options]

Options:
  --quick          a short run (about 0.4 s per benchmark instead of 2.5 s)
  --filter <text>  only the benchmarks whose name contains <text>, e.g. --filter sqlite or --filter "engine turn";
                   --filter soak runs only the server soak (any other filter leaves it out)
  --sqlite-dir <d> create the SQLite databases under <d> (default: the system's temporary directory), to measure
                   the disk the data will live on
  --burst <n>      participants of the prompt-burst benchmark (default 100,000; 2,000 with --quick)
  --pg-burst <n>   participants of the PostgreSQL bursts, and of a SQLite burst beside them (default 10,000; 500
                   with --quick)
  --servers <a,b>  the end-to-end and burst setups: sqlite, pg1 (PostgreSQL, one instance), pg2 (two instances
                   sharing the database); default all (the PostgreSQL ones only when a URL is set)
  --dashboard-participants <n>, --dashboard-days <n>
                   the dashboard benchmark's study (default 10,000 participants, 1,000 with --quick, × 30 days)
  --dashboard-pages <a,b>
                   only the dashboard pages whose names contain one of these, e.g. "overview,roster page 1"
  --cpu-profile    profile the end-to-end and burst servers (node --cpu-prof) and print where their CPU went, by
                   component (SQLite, Kysely, the openai SDK, Node's HTTP, our own code by layer, …)
  --help           this text

PostgreSQL benchmarks (store rows, end to end and burst with one and two instances) run when PROMPTPIPE_BENCH_PG_URL
(or PROMPTPIPE_TEST_PG_URL) is set; without it they are skipped with a message.`;

/** Parses `argv` (without the node and script paths); throws on an unknown option. */
export function parseBenchOptions(argv: readonly string[]): BenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: 'boolean', default: false },
      filter: { type: 'string' },
      'sqlite-dir': { type: 'string' },
      help: { type: 'boolean', default: false },
      burst: { type: 'string' },
      'pg-burst': { type: 'string' },
      servers: { type: 'string' },
      'cpu-profile': { type: 'boolean', default: false },
      'dashboard-participants': { type: 'string' },
      'dashboard-days': { type: 'string' },
      'dashboard-pages': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  return {
    profile: values.quick ? QUICK_PROFILE : FULL_PROFILE,
    filter: values.filter?.trim() || undefined,
    sqliteDirectory: values['sqlite-dir']?.trim() || undefined,
    help: values.help,
    burstParticipants: parseBurst(values.burst),
    postgresBurstParticipants: parseCount('--pg-burst', values['pg-burst']),
    servers: parseServers(values.servers),
    cpuProfile: values['cpu-profile'],
    dashboardParticipants: parseCount('--dashboard-participants', values['dashboard-participants']),
    dashboardDays: parseCount('--dashboard-days', values['dashboard-days']) ?? 30,
    dashboardPages: (values['dashboard-pages'] ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== ''),
  };
}

function parseCount(option: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`${option} must be a positive whole number, not "${value}"`);
  return count;
}

function parseBurst(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1) throw new Error(`--burst must be a positive whole number, not "${value}"`);
  return count;
}

function parseServers(value: string | undefined): ServerSetup[] | undefined {
  if (value === undefined) return undefined;
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const unknown = names.filter((name) => !(SERVER_SETUPS as readonly string[]).includes(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(`--servers takes a list of ${SERVER_SETUPS.join(', ')}, not "${value}"`);
  }
  return names as ServerSetup[];
}
