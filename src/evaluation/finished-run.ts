/**
 * A finished run read back from its report directory (plan.json and conversations/), so `promptpipe eval-report` can
 * summarise and render it again, with human ratings given since, without simulating anything.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { AppError } from '../domain/errors.ts';
import { type Rubric, rubricSchema } from '../research/ratings/rubric.ts';
import { type ConversationResult, conversationKey } from './evaluation-run.ts';
import type { CoachConfiguration } from './simulation-app.ts';

const planSchema = z.object({
  days: z.number().int().positive(),
  repeats: z.number().int().positive(),
  personas: z.array(z.object({ id: z.string() }).passthrough()).min(1),
  configurations: z
    .array(
      z.object({
        label: z.string(),
        promptsDir: z.string().optional(),
        model: z.string().optional(),
        toolProtocol: z.enum(['native', 'text']).optional(),
      }),
    )
    .min(1),
  rubric: rubricSchema,
});

export interface FinishedRun {
  days: number;
  repeats: number;
  configurations: CoachConfiguration[];
  rubric: Rubric;
  results: ConversationResult[];
}

function readJson(file: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new AppError('invalid_input', `${what}: cannot read "${file}"`);
  }
}

export function loadFinishedRun(outDir: string): FinishedRun {
  const planFile = join(outDir, 'plan.json');
  if (!existsSync(planFile)) {
    throw new AppError('invalid_input', `--out: "${outDir}" holds no evaluation run (no plan.json)`);
  }
  const parsed = planSchema.safeParse(readJson(planFile, '--out'));
  if (!parsed.success) {
    throw new AppError('invalid_input', `--out: ${planFile} is not a plan written by promptpipe eval`);
  }
  const plan = parsed.data;
  const results: ConversationResult[] = [];
  for (const configuration of plan.configurations) {
    for (const persona of plan.personas) {
      for (let repeat = 1; repeat <= plan.repeats; repeat += 1) {
        const key = conversationKey(configuration.label, persona.id, repeat);
        const file = join(outDir, 'conversations', `${key}.json`);
        if (!existsSync(file)) {
          throw new AppError(
            'invalid_input',
            `--out: conversation ${key} has not finished; finish the run with promptpipe eval … --resume first`,
          );
        }
        results.push(readJson(file, '--out') as ConversationResult);
      }
    }
  }
  const configurations = plan.configurations.map((configuration) => ({
    label: configuration.label,
    promptsDir: configuration.promptsDir,
    model: configuration.model,
    toolProtocol: configuration.toolProtocol,
  }));
  return { days: plan.days, repeats: plan.repeats, configurations, rubric: plan.rubric, results };
}
