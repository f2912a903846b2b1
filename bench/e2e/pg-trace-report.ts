/**
 * Prints the statement profile(s) written by `pg-statement-trace.ts`: round trips and time per statement, the most
 * costly first, divided by a unit count (turns or jobs) when given.
 *
 *   node bench/e2e/pg-trace-report.ts <trace.json>… [--per <count>] [--top <n>]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: { per: { type: 'string' }, top: { type: 'string' } },
  allowPositionals: true,
});
const per = Number(values.per ?? 1);
const top = Number(values.top ?? 25);
const merged = new Map<string, { calls: number; totalMs: number }>();
for (const file of positionals) {
  for (const row of JSON.parse(readFileSync(file, 'utf8')) as { text: string; calls: number; totalMs: number }[]) {
    const entry = merged.get(row.text) ?? { calls: 0, totalMs: 0 };
    entry.calls += row.calls;
    entry.totalMs += row.totalMs;
    merged.set(row.text, entry);
  }
}
const rows = [...merged].sort((a, b) => b[1].totalMs - a[1].totalMs);
const calls = rows.reduce((sum, [, entry]) => sum + entry.calls, 0);
const totalMs = rows.reduce((sum, [, entry]) => sum + entry.totalMs, 0);
process.stdout.write(
  `${calls} round trips (${(calls / per).toFixed(1)} per unit), ${(totalMs / 1000).toFixed(1)} s waited (${(totalMs / per).toFixed(2)} ms per unit)\n`,
);
process.stdout.write('calls/unit | ms/unit | mean ms | statement\n');
for (const [text, entry] of rows.slice(0, top)) {
  process.stdout.write(
    `${(entry.calls / per).toFixed(2).padStart(10)} | ${(entry.totalMs / per).toFixed(2).padStart(7)} | ${(entry.totalMs / entry.calls).toFixed(2).padStart(7)} | ${text.slice(0, 160)}\n`,
  );
}
