/**
 * The two measuring loops. Latency of each operation comes from `process.hrtime.bigint()`; elapsed time and the time
 * budget from `performance.now()`. Both loops warm up first (JIT, SQLite page cache, prepared statements, pool
 * connections) and stop at whichever comes first: the iteration cap or the time budget.
 */
import { performance } from 'node:perf_hooks';
import type { Measurement, RunProfile } from './benchmark.ts';
import { latencyPercentiles } from './statistics.ts';

const NANOSECONDS_PER_MILLISECOND = 1_000_000;

/** Runs `operation` once and returns how long it took, in milliseconds. */
async function timeOnce(operation: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await operation();
  return Number(process.hrtime.bigint() - start) / NANOSECONDS_PER_MILLISECOND;
}

interface MeasurementCommon {
  profile: RunProfile;
  /** Default: the profile's. */
  warmupIterations?: number;
  /** Default: the profile's. */
  maxIterations?: number;
  /** Default 1. */
  itemsPerOperation?: number;
  /** Default `ops`. */
  itemUnit?: string;
}

export interface SequentialMeasurement extends MeasurementCommon {
  /** Untimed work before each iteration (refilling a queue). Its time counts against the budget only. */
  prepare?: (index: number) => Promise<void>;
  /** The measured work. `index` counts from 0 across warm-up and measurement, so it can make unique ids. */
  operation: (index: number) => Promise<void>;
  /** Measured iterations run even past the time budget. Default 1. */
  minIterations?: number;
}

/**
 * One operation at a time. Operations per second = iterations ÷ the summed time of the measured operations, so the
 * untimed `prepare` steps do not count.
 */
export async function measureSequential(measurement: SequentialMeasurement): Promise<Measurement> {
  const { profile, operation, prepare } = measurement;
  const warmupIterations = measurement.warmupIterations ?? profile.warmupIterations;
  const maxIterations = measurement.maxIterations ?? profile.maxIterations;
  const minIterations = Math.min(measurement.minIterations ?? 1, maxIterations);
  let index = 0;
  for (; index < warmupIterations; index += 1) {
    await prepare?.(index);
    await operation(index);
  }
  const latenciesMs: number[] = [];
  const budgetStart = performance.now();
  while (
    latenciesMs.length < maxIterations &&
    (latenciesMs.length < minIterations || performance.now() - budgetStart < profile.timeBudgetMs)
  ) {
    const current = index;
    await prepare?.(current);
    latenciesMs.push(await timeOnce(() => operation(current)));
    index += 1;
  }
  const measuredMs = latenciesMs.reduce((sum, latency) => sum + latency, 0);
  return summarise(measurement, latenciesMs, measuredMs);
}

export interface ConcurrentMeasurement extends MeasurementCommon {
  /** How many operations are in flight at once; each worker runs its operations one after another. */
  workers: number;
  /** The measured work. `index` counts that worker's operations from 0 across warm-up and measurement. */
  operation: (worker: number, index: number) => Promise<void>;
}

/**
 * `workers` operations in flight at once. `warmupIterations` and `maxIterations` count operations of all workers
 * together. Operations per second = measured operations ÷ the elapsed (wall-clock) time of the measured phase.
 */
export async function measureConcurrent(measurement: ConcurrentMeasurement): Promise<Measurement> {
  const { profile, workers, operation } = measurement;
  const warmupPerWorker = Math.ceil((measurement.warmupIterations ?? profile.warmupIterations) / workers);
  const maxIterations = measurement.maxIterations ?? profile.maxIterations;
  const nextIndexOfWorker = Array.from({ length: workers }, () => 0);
  /** Runs the next operation of `worker`, timed. */
  const runNext = (worker: number): Promise<number> => {
    const index = nextIndexOfWorker[worker]!;
    nextIndexOfWorker[worker] = index + 1;
    return timeOnce(() => operation(worker, index));
  };

  await runWorkers(workers, async (worker, stopped) => {
    for (let count = 0; count < warmupPerWorker && !stopped(); count += 1) await runNext(worker);
  });

  const latenciesMs: number[] = [];
  let started = 0;
  const start = performance.now();
  await runWorkers(workers, async (worker, stopped) => {
    while (
      !stopped() &&
      started < maxIterations &&
      (started < workers || performance.now() - start < profile.timeBudgetMs)
    ) {
      started += 1;
      latenciesMs.push(await runNext(worker));
    }
  });
  return summarise(measurement, latenciesMs, performance.now() - start);
}

/**
 * Runs `count` workers at once and waits for all of them. When one fails, `stopped()` turns true so the others
 * finish their current operation and stop (the store is not disposed under them); then the first error is thrown.
 */
async function runWorkers(
  count: number,
  work: (worker: number, stopped: () => boolean) => Promise<void>,
): Promise<void> {
  let failure: { error: unknown } | undefined;
  const stopped = () => failure !== undefined;
  await Promise.all(
    Array.from({ length: count }, async (_, worker) => {
      try {
        await work(worker, stopped);
      } catch (error) {
        failure ??= { error };
      }
    }),
  );
  if (failure) throw failure.error;
}

function summarise(measurement: MeasurementCommon, latenciesMs: number[], elapsedMs: number): Measurement {
  return {
    iterations: latenciesMs.length,
    operationsPerSecond: elapsedMs > 0 ? (latenciesMs.length * 1000) / elapsedMs : Number.NaN,
    itemsPerOperation: measurement.itemsPerOperation ?? 1,
    itemUnit: measurement.itemUnit ?? 'ops',
    ...latencyPercentiles(latenciesMs),
  };
}
