/** The results table: Markdown, so a run can be pasted into `docs/benchmarks.md` as is. */
import type { BenchmarkResult } from './benchmark.ts';

const HEADERS = ['benchmark', 'iterations', 'ops/s', 'p50 ms', 'p95 ms', 'p99 ms', 'throughput'] as const;
/** Which columns are numbers (right-aligned). */
const NUMERIC = [false, true, true, true, true, true, true] as const;

/** A rate: no decimals from 100 up, one below. */
export function formatRate(perSecond: number): string {
  if (!Number.isFinite(perSecond)) return 'n/a';
  return perSecond.toLocaleString('en-US', { maximumFractionDigits: perSecond >= 100 ? 0 : 1 });
}

/** A latency in milliseconds with about three significant digits. */
export function formatMilliseconds(milliseconds: number): string {
  if (!Number.isFinite(milliseconds)) return 'n/a';
  const fractionDigits = milliseconds < 1 ? 3 : milliseconds < 10 ? 2 : milliseconds < 100 ? 1 : 0;
  return milliseconds.toLocaleString('en-US', {
    minimumFractionDigits: fractionDigits,
    maximumFractionDigits: fractionDigits,
  });
}

function toCells(result: BenchmarkResult): string[] {
  return [
    result.name,
    result.iterations.toLocaleString('en-US'),
    formatRate(result.operationsPerSecond),
    formatMilliseconds(result.p50Ms),
    formatMilliseconds(result.p95Ms),
    formatMilliseconds(result.p99Ms),
    `${formatRate(result.operationsPerSecond * result.itemsPerOperation)} ${result.itemUnit}/s`,
  ];
}

/** The table, one row per result, columns padded to line up. */
export function formatResultsTable(results: readonly BenchmarkResult[]): string {
  const rows = [[...HEADERS], ...results.map(toCells)];
  const widths = HEADERS.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  const pad = (cell: string, column: number) =>
    NUMERIC[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!);
  const line = (row: string[]) => `| ${row.map(pad).join(' | ')} |`;
  const separator = `| ${widths.map((width, column) => (NUMERIC[column] ? `${'-'.repeat(width - 1)}:` : '-'.repeat(width))).join(' | ')} |`;
  const [header, ...body] = rows;
  return [line(header!), separator, ...body.map(line)].join('\n');
}
