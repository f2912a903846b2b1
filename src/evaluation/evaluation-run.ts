/**
 * `promptpipe eval`'s work: every persona × repetition × coach configuration simulated (a few at a time), checked by
 * the rules and scored by the judge. Each finished conversation is written to the report directory at once, so a run
 * that is stopped loses only the conversations in flight, and `--resume` skips the ones already there.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Environment } from '../config.ts';
import { AppError, errorMessage } from '../domain/errors.ts';
import type { LlmClient } from '../llm/llm.ts';
import type { Rubric } from '../research/ratings/rubric.ts';
import { type Judgement, judgeConversation } from './judge.ts';
import type { Persona } from './persona.ts';
import { checkRules, type RuleResult, type RuleSettings } from './rules.ts';
import { simulatePersona } from './simulation.ts';
import type { CoachConfiguration } from './simulation-app.ts';
import type { SimulationRecord } from './simulation-record.ts';

export interface ConversationResult {
  persona: string;
  configuration: string;
  repeat: number;
  record: SimulationRecord;
  rules: RuleResult[];
  /** Absent when no judge is configured. */
  judgement?: Judgement;
}

export type ProgressEvent =
  | { type: 'started' | 'finished' | 'skipped'; key: string; failedRules?: number }
  | { type: 'day'; key: string; day: number; days: number };

export interface EvaluationPlan {
  personas: Persona[];
  rubric: Rubric;
  days: number;
  repeats: number;
  configurations: CoachConfiguration[];
  environment: Environment;
  personaModel?: LlmClient | undefined;
  judge?: LlmClient | undefined;
  /** How many conversations run at the same time. */
  concurrency: number;
  outDir: string;
  resume: boolean;
  rules: RuleSettings;
  onProgress?: (event: ProgressEvent) => void;
}

/** `A/ada.1`: a conversation's name in progress lines, file names and the report. */
export function conversationKey(configuration: string, persona: string, repeat: number): string {
  return `${configuration}/${persona}.${repeat}`;
}

/** What must be the same for a resumed run to continue an earlier one. */
function planFingerprint(plan: EvaluationPlan): unknown {
  return {
    days: plan.days,
    repeats: plan.repeats,
    personas: plan.personas,
    configurations: plan.configurations,
    rubric: plan.rubric,
    judged: plan.judge !== undefined,
  };
}

function writeJsonAtomically(file: string, value: unknown): void {
  writeFileSync(`${file}.partial`, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(`${file}.partial`, file);
}

function preparePlanFile(plan: EvaluationPlan): void {
  mkdirSync(plan.outDir, { recursive: true });
  const file = join(plan.outDir, 'plan.json');
  const fingerprint = planFingerprint(plan);
  if (plan.resume && existsSync(file)) {
    const earlier = readFileSync(file, 'utf8');
    if (earlier.trim() !== JSON.stringify(fingerprint, null, 2)) {
      throw new AppError(
        'invalid_input',
        `--resume: ${file} was written for other personas, days, configurations or rubric; use another --out`,
      );
    }
    return;
  }
  writeJsonAtomically(file, fingerprint);
}

function readFinished(file: string): ConversationResult | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ConversationResult;
  } catch {
    return undefined;
  }
}

async function runOne(
  plan: EvaluationPlan,
  persona: Persona,
  coach: CoachConfiguration,
  repeat: number,
): Promise<ConversationResult> {
  const key = conversationKey(coach.label, persona.id, repeat);
  const record = await simulatePersona({
    persona,
    coach,
    environment: plan.environment,
    days: plan.days,
    repeat,
    intakeTurnLimit: plan.rules.intakeTurnLimit,
    personaModel: plan.personaModel,
    onDay: (day) => plan.onProgress?.({ type: 'day', key, day, days: plan.days }),
  });
  const rules = checkRules(record, plan.rules);
  const judgement = plan.judge
    ? await judgeConversation({
        judge: plan.judge,
        rubric: plan.rubric,
        lines: record.lines,
        timeZone: persona.timezone,
      })
    : undefined;
  return {
    persona: persona.id,
    configuration: coach.label,
    repeat,
    record,
    rules,
    ...(judgement ? { judgement } : {}),
  };
}

/** Runs the plan; returns every conversation's result, finished now or earlier (resume), in plan order. */
export async function runEvaluation(plan: EvaluationPlan): Promise<ConversationResult[]> {
  preparePlanFile(plan);
  const conversationsDir = join(plan.outDir, 'conversations');
  const tasks: { persona: Persona; coach: CoachConfiguration; repeat: number; file: string; key: string }[] = [];
  for (const coach of plan.configurations) {
    mkdirSync(join(conversationsDir, coach.label), { recursive: true });
    for (const persona of plan.personas) {
      for (let repeat = 1; repeat <= plan.repeats; repeat += 1) {
        const key = conversationKey(coach.label, persona.id, repeat);
        tasks.push({ persona, coach, repeat, key, file: join(conversationsDir, `${key}.json`) });
      }
    }
  }
  const results = new Array<ConversationResult | undefined>(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let index = next++; index < tasks.length; index = next++) {
      const task = tasks[index];
      if (!task) continue;
      const finished = plan.resume ? readFinished(task.file) : undefined;
      if (finished) {
        results[index] = finished;
        plan.onProgress?.({ type: 'skipped', key: task.key });
        continue;
      }
      plan.onProgress?.({ type: 'started', key: task.key });
      let result: ConversationResult;
      try {
        result = await runOne(plan, task.persona, task.coach, task.repeat);
      } catch (error) {
        throw new AppError('invalid_input', `${task.key}: ${errorMessage(error)}`, { cause: error });
      }
      writeJsonAtomically(task.file, result);
      results[index] = result;
      const failedRules = result.rules.filter((rule) => rule.status === 'fail').length;
      plan.onProgress?.({ type: 'finished', key: task.key, failedRules });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(plan.concurrency, tasks.length)) }, worker));
  return results.filter((result): result is ConversationResult => result !== undefined);
}
