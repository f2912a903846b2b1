/**
 * `promptpipe eval-report --out <dir>`: summarises and renders a finished evaluation run again (report.html and
 * report.json) with the human ratings given since: the study's own ratings of this run (`--study-ratings`, read from
 * the study database, beside a running server too) and/or an exported ratings file (`--ratings`). Exit code as
 * `promptpipe eval`'s: 1 when a rule failed or a mean score is below its threshold.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { AppError } from '../domain/errors.ts';
import { loadFinishedRun } from '../evaluation/finished-run.ts';
import { readHumanRatings } from '../evaluation/human-ratings-file.ts';
import { writeReport } from '../evaluation/report-files.ts';
import { type EvaluationSummary, summarise } from '../evaluation/report-summary.ts';
import { createRunIdentity, readRunIdentity, saveRunIdentity } from '../evaluation/run-identity.ts';
import type { RunIdentity } from '../research/ratings/eval-conversation.ts';
import { type HumanScore, humanRatingsOfRun } from '../research/ratings/human-agreement.ts';
import type { Store } from '../store/store.ts';
import type { CliIo } from './cli-io.ts';

export interface EvalReportOptions {
  out: string;
  ratings?: string;
  studyRatings?: boolean;
  minScore?: number;
}

/** The verdict line, the failures, the low scores and the agreement; exit code 1 when the run did not pass. */
export function printVerdict(
  io: CliIo,
  report: { run: RunIdentity; summary: EvaluationSummary; conversations: number; html: string },
): void {
  const { summary } = report;
  io.stdout.write(
    `${summary.passed ? 'PASSED' : 'FAILED'}: ${report.conversations} conversation(s), ` +
      `${summary.failures.length} failed rule(s), ${summary.belowThreshold.length} score(s) below threshold; ` +
      `report: ${report.html}\n  run ${report.run.id}\n`,
  );
  for (const failure of summary.failures)
    io.stdout.write(`  rule ${failure.rule} failed in ${failure.conversation}: ${failure.detail}\n`);
  for (const low of summary.belowThreshold) {
    io.stdout.write(`  ${low.criterion} (${low.configuration}): mean ${low.mean.toFixed(2)} < ${low.threshold}\n`);
  }
  for (const row of summary.agreement) {
    io.stdout.write(
      `  judge-human agreement on ${row.criterion}: kappa ${row.kappa.toFixed(3)} over ${row.items} pair(s)\n`,
    );
  }
  if (!summary.passed) io.exit(1);
}

/** The study database's ratings as rows for human-agreement.ts (oldest first). */
export async function studyHumanScores(store: Store): Promise<HumanScore[]> {
  const ratings = await store.ratings.list();
  return ratings.map((rating) => ({
    conversation: rating.conversation,
    criterion: rating.criterion,
    score: rating.score,
    rater: rating.rater,
    turn: rating.transcriptEntryId,
  }));
}

export async function runEvalReportCommand(
  options: EvalReportOptions,
  io: CliIo,
  openStudyStore: () => Promise<Store>,
): Promise<void> {
  if (!options.ratings && !options.studyRatings) {
    throw new AppError('invalid_input', 'give --study-ratings, --ratings <file>, or both: the human ratings to add');
  }
  const finished = loadFinishedRun(options.out);
  const fileScores = options.ratings ? readHumanRatings(options.ratings) : [];
  let studyScores: HumanScore[] = [];
  if (options.studyRatings) {
    const store = await openStudyStore();
    try {
      studyScores = await studyHumanScores(store);
    } finally {
      await store.close();
    }
  }
  // A report from before run ids gets one now; it is saved with the report, once nothing can fail any more.
  const recorded = readRunIdentity(options.out);
  const run = recorded ?? createRunIdentity();
  const summary = summarise({
    results: finished.results,
    rubric: finished.rubric,
    configurations: finished.configurations,
    days: finished.days,
    repeats: finished.repeats,
    humanRatings: humanRatingsOfRun([...studyScores, ...fileScores], run.id),
    minScore: options.minScore ?? previousMinScore(options.out),
  });
  if (!recorded) saveRunIdentity(options.out, run);
  writeReport(options.out, { run, summary, results: finished.results, rubric: finished.rubric });
  printVerdict(io, { run, summary, conversations: finished.results.length, html: join(options.out, 'report.html') });
}

/** The `--min-score` the run was gated with, from the report.json being replaced. */
function previousMinScore(outDir: string): number | undefined {
  try {
    const report = JSON.parse(readFileSync(join(outDir, 'report.json'), 'utf8')) as {
      summary?: { minScore?: unknown };
    };
    const minScore = report.summary?.minScore;
    return typeof minScore === 'number' ? minScore : undefined;
  } catch {
    return undefined;
  }
}

export function finiteNumber(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed)) throw new InvalidArgumentError('must be a number');
  return parsed;
}

export function registerEvalReportCommand(program: Command, io: CliIo, openStudyStore: () => Promise<Store>): void {
  program
    .command('eval-report')
    .description("render a finished evaluation run's report again with the human ratings given since")
    .requiredOption('--out <dir>', 'the report directory of the run (promptpipe eval --out)')
    .option('--study-ratings', "the study database's ratings of this run (dashboard: Evaluations)")
    .option('--ratings <file>', 'human ratings from a file (the ratings export, CSV or JSON lines)')
    .option('--min-score <score>', "fail when a criterion's mean is below this (default: as the run)", finiteNumber)
    .action((options: EvalReportOptions) => runEvalReportCommand(options, io, openStudyStore));
}
