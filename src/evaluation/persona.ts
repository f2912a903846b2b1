/**
 * A simulated participant (persona): who they are, how they write, how they behave over the study days, and the
 * seed that makes their behaviour repeatable. Read from YAML files (`eval/personas/*.yaml`); a persona is played by a
 * model (`EVAL_PERSONA_*`) or, with a `script`, by fixed replies (tests and exact regression cases).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { AppError } from '../domain/errors.ts';

const probability = z.number().min(0).max(1);
const localTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'a local time HH:MM');

const styleSchema = z
  .object({
    length: z.enum(['short', 'medium', 'long']).default('short'),
    emojis: z.boolean().default(false),
    spelling: z.enum(['careful', 'sloppy']).default('careful'),
    hostility: z.enum(['none', 'mild', 'strong']).default('none'),
  })
  .strict();

const behaviourSchema = z
  .object({
    /** Share of daily prompts answered at all. */
    answerRate: probability.default(1),
    /** Share of the answers given hours late (after the reminder) instead of within minutes. */
    lateRate: probability.default(0),
    /** Share of the answers that say Done (the rest answer "Next time"). */
    doneRate: probability.default(1),
    /** Share of the study days on which they also ask something off-topic. */
    offTopicRate: probability.default(0),
    /** The study day (1 = enrolment day) on which they opt out (STOP), if any. */
    optOutDay: z.number().int().min(1).optional(),
    /** A message voicing risk (self-harm…) sent on `riskDay`: exercises the safety path. */
    riskDay: z.number().int().min(1).optional(),
    riskMessage: z.string().min(1).optional(),
  })
  .strict()
  .refine((behaviour) => (behaviour.riskDay === undefined) === (behaviour.riskMessage === undefined), {
    message: 'riskDay and riskMessage go together',
  });

const scriptSchema = z
  .object({
    /** Their intake answers, in order; when they run out, the intake is left where it is. */
    intake: z.array(z.string().min(1)).min(1),
    /** Answers to any other coach text, cycled. */
    replies: z.array(z.string().min(1)).default(['Thanks!']),
    offTopic: z.array(z.string().min(1)).default(['What is the weather like tomorrow?']),
  })
  .strict();

export const personaSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9-]+$/, 'lowercase letters, digits and dashes'),
    name: z.string().min(1),
    description: z.string().default(''),
    habitGoal: z.string().min(1),
    motivation: z.string().min(1),
    preferredTime: localTime,
    anchor: z.string().min(1),
    timezone: z.string().refine((zone) => isTimeZone(zone), 'an IANA time zone such as Europe/Madrid'),
    language: z.string().min(2).default('en'),
    style: styleSchema.default({ length: 'short', emojis: false, spelling: 'careful', hostility: 'none' }),
    behaviour: behaviourSchema.default({ answerRate: 1, lateRate: 0, doneRate: 1, offTopicRate: 0 }),
    seed: z.number().int().nonnegative().default(1),
    script: scriptSchema.optional(),
  })
  .strict();

export type Persona = z.infer<typeof personaSchema>;

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(file)'}: ${issue.message}`).join('; ');
}

/** Parses one persona file's text; `source` names it in the error. */
export function parsePersona(text: string, source: string): Persona {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    throw new AppError('invalid_input', `${source}: not valid YAML (${(error as Error).message})`);
  }
  const parsed = personaSchema.safeParse(value);
  if (!parsed.success) throw new AppError('invalid_input', `${source}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** Every `*.yaml` / `*.yml` persona of a directory, sorted by id; ids must be unique. */
export function loadPersonas(directory: string): Persona[] {
  let names: string[];
  try {
    names = readdirSync(directory).filter((name) => /\.ya?ml$/.test(name));
  } catch {
    throw new AppError('invalid_input', `--personas: cannot read the directory "${directory}"`);
  }
  if (names.length === 0) throw new AppError('invalid_input', `--personas: no .yaml persona in "${directory}"`);
  const personas = names.map((name) => parsePersona(readFileSync(join(directory, name), 'utf8'), basename(name)));
  const seen = new Set<string>();
  for (const persona of personas) {
    if (seen.has(persona.id))
      throw new AppError('invalid_input', `--personas: two personas have the id "${persona.id}"`);
    seen.add(persona.id);
  }
  return personas.sort((a, b) => a.id.localeCompare(b.id));
}
