/** Latency statistics of a benchmark: nearest-rank percentiles over every measured iteration. */

/** The p50, p95 and p99 latencies, in milliseconds. */
export interface LatencyPercentiles {
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
}

/**
 * The nearest-rank percentile of `sortedValues` (ascending): the smallest value such that at least `percent` % of the
 * values are less than or equal to it. `NaN` for an empty list.
 */
export function percentile(sortedValues: readonly number[], percent: number): number {
  if (sortedValues.length === 0) return Number.NaN;
  const rank = Math.ceil((percent / 100) * sortedValues.length);
  const index = Math.min(sortedValues.length - 1, Math.max(0, rank - 1));
  return sortedValues[index] ?? Number.NaN;
}

/** p50, p95 and p99 of `latenciesMs` (in any order; the array is not modified). */
export function latencyPercentiles(latenciesMs: readonly number[]): LatencyPercentiles {
  const sorted = [...latenciesMs].sort((left, right) => left - right);
  return { p50Ms: percentile(sorted, 50), p95Ms: percentile(sorted, 95), p99Ms: percentile(sorted, 99) };
}
