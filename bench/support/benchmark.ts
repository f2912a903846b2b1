/**
 * The shapes every benchmark shares: what it is given (a store to measure and the run profile) and what it reports.
 */
import type { Store } from '../../src/store/store.ts';
import type { LatencyPercentiles } from './statistics.ts';

/** What a benchmark measured. */
export interface Measurement extends LatencyPercentiles {
  /** Measured operations (warm-up excluded). */
  iterations: number;
  /** Operations per second. */
  operationsPerSecond: number;
  /** How many items (jobs, turns…) one operation handles; 1 unless the operation is a batch. */
  itemsPerOperation: number;
  /** The item's name in the plural, for the throughput column: `appends`, `turns`, `jobs`. */
  itemUnit: string;
}

/** One row of the results table. */
export interface BenchmarkResult extends Measurement {
  /** `<store target>: <benchmark name>`. */
  name: string;
}

/** How long to run: `full` for the documented numbers, `quick` for a smoke run. */
export interface RunProfile {
  readonly mode: 'full' | 'quick';
  /** Measurement time budget of one benchmark, warm-up excluded. */
  readonly timeBudgetMs: number;
  /** Upper bound on measured iterations of a per-operation benchmark. */
  readonly maxIterations: number;
  /** Warm-up iterations of a per-operation benchmark. */
  readonly warmupIterations: number;
  /** How many times the 1,000-job queue is filled and drained by the job runner. */
  readonly drainRounds: number;
}

/** A store opened for one benchmark; `dispose` closes it and deletes its data. */
export interface BenchmarkStore {
  readonly store: Store;
  dispose(): Promise<void>;
}

/** A database a benchmark can run against: a fresh, empty, migrated store per `open()`. */
export interface StoreTarget {
  /** `sqlite` or `postgres`: prefixes every row name. */
  readonly name: string;
  /** One line for the environment header, e.g. `SQLite 3.50.2, file in /tmp, WAL`. */
  readonly description: string;
  open(): Promise<BenchmarkStore>;
}

/** What a benchmark is run with. */
export interface BenchmarkContext {
  readonly target: StoreTarget;
  readonly profile: RunProfile;
}

/** A named measurement; it opens (and disposes) its own stores through `context.target`. */
export interface Benchmark {
  /** What is measured, without the store prefix, e.g. `transcript append (1 entry)`. */
  readonly name: string;
  run(context: BenchmarkContext): Promise<Measurement>;
}
