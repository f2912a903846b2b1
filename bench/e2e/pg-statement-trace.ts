/**
 * Client-side statement profile of a server on PostgreSQL (pg_stat_statements needs a server restart to load, this
 * needs nothing): preloaded into the server with `NODE_OPTIONS=--import <this file>` and
 * `PROMPTPIPE_BENCH_PG_TRACE=<prefix>`, it wraps `pg.Client.prototype.query` (the pool's and the coordination
 * connection's queries all go through it) and, when the process exits, writes `<prefix>-<pid>.json`: per statement text: calls (= round
 * trips) and the summed time from sending to the answer. `bench/e2e/pg-trace-report.ts` prints it.
 */
import { writeFileSync } from 'node:fs';
import pg from 'pg';

interface StatementTotals {
  calls: number;
  totalMs: number;
}

const output = process.env.PROMPTPIPE_BENCH_PG_TRACE;
const totals = new Map<string, StatementTotals>();

/** Whitespace folded, so one statement built in several places counts once. */
function statementText(query: unknown): string {
  const text = typeof query === 'string' ? query : ((query as { text?: string } | null)?.text ?? '(unknown)');
  return text.replace(/\s+/g, ' ').trim();
}

function record(text: string, milliseconds: number): void {
  const entry = totals.get(text) ?? { calls: 0, totalMs: 0 };
  entry.calls += 1;
  entry.totalMs += milliseconds;
  totals.set(text, entry);
}

if (output) {
  const original = pg.Client.prototype.query as (...parameters: unknown[]) => unknown;
  (pg.Client.prototype as { query: unknown }).query = function traced(this: unknown, ...parameters: unknown[]) {
    const text = statementText(parameters[0]);
    const started = performance.now();
    const result = original.apply(this, parameters);
    if (result && typeof (result as Promise<unknown>).then === 'function') {
      (result as Promise<unknown>).then(
        () => record(text, performance.now() - started),
        () => record(text, performance.now() - started),
      );
    } else {
      record(text, 0);
    }
    return result;
  };
  process.on('exit', () => {
    const rows = [...totals].map(([text, entry]) => ({ text, ...entry }));
    writeFileSync(`${output}-${process.pid}.json`, JSON.stringify(rows));
  });
}
