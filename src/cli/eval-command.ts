/**
 * `promptpipe eval`: tries the coach on simulated participants before it meets real ones, and compares two coach
 * configurations on the same personas and seeds. Writes report.html and report.json to --out; exits 1 when a rule
 * fails or a mean score is below its threshold (a CI gate for a prompt change).
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  type Environment,
  type EvaluationModelSettings,
  loadConfig,
  loadEvaluationSettings,
  readEnvironment,
} from '../config.ts';
import { AppError } from '../domain/errors.ts';
import { silentLog } from '../domain/log.ts';
import { type ProgressEvent, runEvaluation } from '../evaluation/evaluation-run.ts';
import { readHumanRatings } from '../evaluation/human-ratings-file.ts';
import { loadPersonas } from '../evaluation/persona.ts';
import { writeReport } from '../evaluation/report-files.ts';
import { summarise } from '../evaluation/report-summary.ts';
import { runIdentity } from '../evaluation/run-identity.ts';
import { type CoachConfiguration, coachEnvironment } from '../evaluation/simulation-app.ts';
import type { LlmClient } from '../llm/llm.ts';
import { createOpenAiCompatibleLlm } from '../llm/openai-compatible-llm.ts';
import { humanRatingsOfRun } from '../research/ratings/human-agreement.ts';
import { loadRubric } from '../research/ratings/rubric.ts';
import type { Store } from '../store/store.ts';
import type { CliIo } from './cli-io.ts';
import { finiteNumber, printVerdict, registerEvalReportCommand } from './eval-report-command.ts';

export interface EvalCommandOptions {
  personas: string;
  rubric: string;
  days: number;
  repeat: number;
  concurrency: number;
  out: string;
  resume?: boolean;
  promptsDir?: string;
  comparePromptsDir?: string;
  model?: string;
  compareModel?: string;
  toolProtocol?: 'native' | 'text';
  compareToolProtocol?: 'native' | 'text';
  minScore?: number;
  ratings?: string;
  intakeTurnLimit: number;
}

function positiveInteger(maximum: number) {
  return (value: string): number => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < 1 || parsed > maximum) {
      throw new InvalidArgumentError(`must be a whole number from 1 to ${maximum}`);
    }
    return parsed;
  };
}

function requireDirectory(path: string | undefined, flag: string): void {
  if (path === undefined) return;
  if (!statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
    throw new AppError('invalid_input', `${flag}: "${path}" is not a directory`);
  }
}

function modelClient(settings: EvaluationModelSettings | undefined): LlmClient | undefined {
  if (!settings) return undefined;
  return createOpenAiCompatibleLlm({
    apiKey: settings.apiKey,
    baseUrl: settings.baseUrl,
    model: settings.model,
    temperature: settings.temperature,
    timeoutMs: 120_000,
    maxRetries: 2,
    log: silentLog,
  });
}

/** A: the coach as configured (with --prompts-dir / --model / --tool-protocol); B: A with the --compare-* changes. */
export function coachConfigurations(options: EvalCommandOptions): CoachConfiguration[] {
  const baseline: CoachConfiguration = {
    label: 'A',
    promptsDir: options.promptsDir,
    model: options.model,
    toolProtocol: options.toolProtocol,
  };
  const compared = options.comparePromptsDir ?? options.compareModel ?? options.compareToolProtocol;
  if (compared === undefined) return [baseline];
  return [
    baseline,
    {
      label: 'B',
      promptsDir: options.comparePromptsDir ?? options.promptsDir,
      model: options.compareModel ?? options.model,
      toolProtocol: options.compareToolProtocol ?? options.toolProtocol,
    },
  ];
}

function progressLine(event: ProgressEvent): string {
  if (event.type === 'day') return `${event.key}: day ${event.day}/${event.days}\n`;
  if (event.type === 'finished') return `${event.key}: done, ${event.failedRules ?? 0} rule(s) failed\n`;
  if (event.type === 'skipped') return `${event.key}: already finished (resume)\n`;
  return `${event.key}: started\n`;
}

export async function runEvalCommand(
  options: EvalCommandOptions,
  io: CliIo,
  environment: Environment = readEnvironment(),
) {
  requireDirectory(options.personas, '--personas');
  requireDirectory(options.promptsDir, '--prompts-dir');
  requireDirectory(options.comparePromptsDir, '--compare-prompts-dir');
  const personas = loadPersonas(options.personas);
  const rubric = loadRubric(options.rubric);
  const humanScores = options.ratings ? readHumanRatings(options.ratings) : [];
  const settings = loadEvaluationSettings(environment);
  const coachConfig = loadConfig(coachEnvironment(environment));
  const configurations = coachConfigurations(options);
  if (!settings.judge)
    io.stderr.write('EVAL_JUDGE_BASE_URL / EVAL_JUDGE_API_KEY not set: rules only, no rubric scores\n');
  mkdirSync(options.out, { recursive: true });
  // A new run gets a new id (its ratings on the dashboard are its own); a resumed one keeps its id.
  const run = runIdentity(options.out, { fresh: !options.resume });
  const results = await runEvaluation({
    personas,
    rubric,
    days: options.days,
    repeats: options.repeat,
    configurations,
    environment,
    personaModel: modelClient(settings.persona),
    judge: modelClient(settings.judge),
    concurrency: options.concurrency,
    outDir: options.out,
    resume: options.resume ?? false,
    rules: { intakeTurnLimit: options.intakeTurnLimit, prepTimeMinutes: coachConfig.scheduling.prepTimeMinutes },
    onProgress: (event) => io.stderr.write(progressLine(event)),
  });
  const summary = summarise({
    results,
    rubric,
    configurations,
    days: options.days,
    repeats: options.repeat,
    humanRatings: humanRatingsOfRun(humanScores, run.id),
    minScore: options.minScore,
  });
  writeReport(options.out, { run, summary, results, rubric });
  printVerdict(io, { run, summary, conversations: results.length, html: join(options.out, 'report.html') });
}

export function registerEvalCommand(program: Command, io: CliIo, openStudyStore: () => Promise<Store>): void {
  const protocols = ['native', 'text'];
  program
    .command('eval')
    .description('run simulated participants through whole study days and check, score and compare the coach')
    .requiredOption('--personas <dir>', 'directory of persona YAML files (see eval/personas)')
    .option('--rubric <file>', 'the judge rubric (YAML)', 'eval/rubric.yaml')
    .option('--days <n>', 'study days to simulate', positiveInteger(60), 7)
    .option('--repeat <n>', 'runs per persona (different seeds: the spread of a comparison)', positiveInteger(50), 1)
    .option('--concurrency <n>', 'conversations simulated at the same time', positiveInteger(32), 2)
    .option('--out <dir>', 'report directory (report.html, report.json, conversations/)', 'eval-report')
    .option('--resume', 'keep the conversations already finished in --out and run only the rest')
    .option(
      '--prompts-dir <dir>',
      'the coach prompts (intake.txt, feedback.txt, prompt-generator.txt); default built-in',
    )
    .option('--compare-prompts-dir <dir>', 'compare with these prompts (configuration B)')
    .option('--model <name>', "the coach's model (default GENAI_MODEL)")
    .option('--compare-model <name>', 'compare with this model (configuration B)')
    .addOption(new Option('--tool-protocol <protocol>', 'native tool calls or the text protocol').choices(protocols))
    .addOption(new Option('--compare-tool-protocol <protocol>', 'compare with this protocol (B)').choices(protocols))
    .option('--min-score <score>', "fail when a criterion's mean is below this (overrides the rubric)", finiteNumber)
    .option('--ratings <file>', 'human ratings (the ratings export, CSV or JSON lines) for judge-human agreement')
    .option(
      '--intake-turn-limit <n>',
      'participant messages within which the intake must finish',
      positiveInteger(50),
      6,
    )
    .action((options: EvalCommandOptions) => runEvalCommand(options, io));
  registerEvalReportCommand(program, io, openStudyStore);
}
