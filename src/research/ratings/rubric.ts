/**
 * The rubric a judge model (and a human rater) scores a conversation with: criteria on one ordinal scale, each with
 * anchors and examples, and the lowest acceptable mean score that gates a change (`eval/rubric.yaml`).
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { AppError } from '../../domain/errors.ts';

const criterionSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9_]+$/, 'lowercase letters, digits and underscores'),
    name: z.string().min(1),
    description: z.string().min(1),
    /** What a score means, by score ("1": "…", "5": "…"). */
    anchors: z.record(z.string(), z.string()).default({}),
    examples: z.array(z.object({ text: z.string(), score: z.number().int() }).strict()).default([]),
    /** The lowest acceptable mean score over the personas; below it the run fails. */
    threshold: z.number().optional(),
  })
  .strict();

export const rubricSchema = z
  .object({
    name: z.string().min(1),
    scale: z
      .object({ min: z.number().int(), max: z.number().int() })
      .strict()
      .refine((scale) => scale.max > scale.min, 'max must be above min'),
    instructions: z.string().default(''),
    criteria: z.array(criterionSchema).min(1),
  })
  .strict()
  .superRefine((rubric, context) => {
    const ids = rubric.criteria.map((criterion) => criterion.id);
    if (new Set(ids).size !== ids.length) context.addIssue({ code: 'custom', message: 'criterion ids must be unique' });
    for (const criterion of rubric.criteria) {
      for (const example of criterion.examples) {
        if (example.score < rubric.scale.min || example.score > rubric.scale.max) {
          context.addIssue({ code: 'custom', message: `${criterion.id}: an example's score is off the scale` });
        }
      }
    }
  });

export type Rubric = z.infer<typeof rubricSchema>;
export type Criterion = Rubric['criteria'][number];

export function parseRubric(text: string, source: string): Rubric {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    throw new AppError('invalid_input', `${source}: not valid YAML (${(error as Error).message})`);
  }
  const parsed = rubricSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(file)'}: ${issue.message}`);
    throw new AppError('invalid_input', `${source}: ${issues.join('; ')}`);
  }
  return parsed.data;
}

export function loadRubric(file: string): Rubric {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new AppError('invalid_input', `--rubric: cannot read "${file}"`);
  }
  return parseRubric(text, file);
}
