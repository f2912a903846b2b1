/** The tables of the end-to-end benchmarks, in Markdown like the main table. */
import { formatMilliseconds, formatRate } from '../support/report.ts';
import type { ProfileSummary } from './cpu-profile.ts';
import type { EndToEndResult } from './end-to-end-turns.ts';
import type { BurstResult } from './prompt-burst.ts';

function table(headers: readonly string[], rows: readonly string[][]): string {
  const all = [[...headers], ...rows];
  const widths = headers.map((_, column) => Math.max(...all.map((row) => row[column]?.length ?? 0)));
  const line = (row: readonly string[]) =>
    `| ${row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join(' | ')} |`;
  const rule = `| ${widths.map((width, column) => (column === 0 ? '-'.repeat(width) : `${'-'.repeat(width - 1)}:`)).join(' | ')} |`;
  return [line(all[0] ?? []), rule, ...all.slice(1).map(line)].join('\n');
}

const mib = (value: number): string => `${value.toFixed(0)} MB`;

export function formatEndToEndTable(results: readonly EndToEndResult[]): string {
  return table(
    [
      'end-to-end (real server process)',
      'turns',
      'turns/s',
      'p50 ms',
      'p95 ms',
      'p99 ms',
      'idle RSS',
      'peak RSS',
      'server CPU / turn',
      'PostgreSQL CPU / turn',
      'stored / turn',
    ],
    results.map((result) => [
      result.remarks ? `${result.name} — ${result.remarks}` : result.name,
      result.turns.toLocaleString('en-US'),
      formatRate(result.turnsPerSecond),
      formatMilliseconds(result.p50Ms),
      formatMilliseconds(result.p95Ms),
      formatMilliseconds(result.p99Ms),
      mib(result.idleRssMiB),
      mib(result.peakRssMiB),
      `${result.serverCpuMsPerTurn.toFixed(1)} ms`,
      result.databaseCpuMsPerTurn === undefined ? '–' : `${result.databaseCpuMsPerTurn.toFixed(1)} ms`,
      `${(result.bytesStoredPerTurn / 1024).toFixed(1)} KB`,
    ]),
  );
}

/** One row per run, so SQLite and PostgreSQL (one and two instances) read side by side. */
export function formatBurstTable(results: readonly BurstResult[]): string {
  return table(
    [
      'prompt burst (same local minute)',
      'delivered in',
      'prompts/s',
      'server CPU',
      'PostgreSQL CPU',
      'idle RSS',
      'peak RSS',
      'lost or doubled',
    ],
    results.map((result) => {
      const complete = result.promptsDelivered === result.participants && result.duplicates === 0;
      const perPrompt = (seconds: number) =>
        `${seconds.toFixed(1)} s (${((seconds * 1000) / result.participants).toFixed(1)} ms/prompt)`;
      return [
        `${result.database}: ${result.participants.toLocaleString('en-US')} participants (seeded in ${result.seedSeconds.toFixed(1)} s)`,
        `${result.deliverySeconds.toFixed(1)} s`,
        formatRate(result.promptsPerSecond),
        perPrompt(result.serverCpuSeconds),
        result.databaseCpuSeconds === undefined ? '–' : perPrompt(result.databaseCpuSeconds),
        mib(result.idleRssMiB),
        mib(result.peakRssMiB),
        complete
          ? 'none'
          : `${result.participants - result.promptsDelivered} lost, ${result.duplicates} duplicate deliveries`,
      ];
    }),
  );
}

/** Where a server's CPU went (`--cpu-profile`): each component's share of its busy samples, the largest first. */
export function formatCpuProfileTable(name: string, summary: ProfileSummary, smallest = 0.005): string {
  const shown = summary.components.filter((component) => component.share >= smallest);
  const rest = summary.components.slice(shown.length).reduce((sum, component) => sum + component.share, 0);
  const percent = (share: number): string => `${(share * 100).toFixed(1)} %`;
  return table(
    [`server CPU by component: ${name} (idle ${percent(summary.idle)} of samples)`, 'share of busy CPU'],
    [
      ...shown.map((component) => [component.component, percent(component.share)]),
      ...(rest > 0 ? [['everything under 0.5 % each', percent(rest)]] : []),
    ],
  );
}
