/**
 * Which databases the end-to-end and burst benchmarks run on: SQLite, and with a PostgreSQL URL one and two server
 * instances sharing a schema (`--servers` picks some of them). The burst runs on PostgreSQL at its own size (the
 * study scale of 10,000 by default, 500 with --quick), and then on SQLite at that size too, so every PostgreSQL burst
 * has a SQLite one beside it.
 */
import type { BenchOptions } from '../support/options.ts';
import { type ServerDatabase, SQLITE_SINGLE } from './bench-database.ts';
import { BURST_PARTICIPANTS } from './prompt-burst.ts';

/** The `--servers` names. */
export const SERVER_SETUPS = ['sqlite', 'pg1', 'pg2'] as const;
export type ServerSetup = (typeof SERVER_SETUPS)[number];

/** PostgreSQL burst sizes, by run mode. */
export const POSTGRES_BURST_PARTICIPANTS = { full: 10_000, quick: 500 } as const;

/** The selected setups that can run: the PostgreSQL ones only with a URL (skipped with a message otherwise). */
export function serverDatabases(
  setups: readonly ServerSetup[] | undefined,
  postgresUrl: string | undefined,
): ServerDatabase[] {
  const wanted = setups ?? SERVER_SETUPS;
  const databases: ServerDatabase[] = wanted.includes('sqlite') ? [SQLITE_SINGLE] : [];
  const postgresWanted = wanted.filter((setup) => setup !== 'sqlite');
  if (postgresWanted.length === 0) return databases;
  if (postgresUrl === undefined) {
    process.stderr.write(
      'PostgreSQL end-to-end and burst benchmarks skipped: PROMPTPIPE_BENCH_PG_URL / PROMPTPIPE_TEST_PG_URL is not set\n',
    );
    return databases;
  }
  for (const setup of postgresWanted) databases.push({ postgresUrl, instances: setup === 'pg1' ? 1 : 2 });
  return databases;
}

export interface BurstRun {
  readonly database: ServerDatabase;
  readonly participants: number;
}

/** SQLite at its burst size; then, with PostgreSQL, each database at the PostgreSQL size, SQLite first. */
export function burstRuns(databases: readonly ServerDatabase[], options: BenchOptions): BurstRun[] {
  const mode = options.profile.mode;
  const sqliteSize = options.burstParticipants ?? BURST_PARTICIPANTS[mode];
  const postgresSize = options.postgresBurstParticipants ?? POSTGRES_BURST_PARTICIPANTS[mode];
  const sqlite = databases.find((database) => database.postgresUrl === undefined);
  const postgres = databases.filter((database) => database.postgresUrl !== undefined);
  const runs: BurstRun[] = [];
  if (sqlite) runs.push({ database: sqlite, participants: sqliteSize });
  if (postgres.length === 0) return runs;
  if (sqlite && sqliteSize !== postgresSize) runs.push({ database: sqlite, participants: postgresSize });
  for (const database of postgres) runs.push({ database, participants: postgresSize });
  return runs;
}
