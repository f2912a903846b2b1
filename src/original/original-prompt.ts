/**
 * The original PromptPipe's `Prompt` (the body of `POST /send` and `POST /schedule`) and its validation rules, from
 * its docs/api.md: `to` is required; `type` defaults to `static`; static needs `body` (at most 4096 characters);
 * genai needs `system_prompt` and `user_prompt`; branch needs 2–10 `branch_options` (label ≤ 100, body ≤ 1000).
 * Pure: the zod schemas are the request shapes (and the OpenAPI document's); `promptProblem` applies the type rules.
 *
 * Two types differ on purpose (docs/migrating.md): `custom` is sent as its `body` (the original needed a generator
 * compiled into the server and answered 500 without one), and `conversation` is refused with a pointer to enrolment
 * (here the coach runs every enrolled participant's conversation).
 */
import { z } from 'zod';

export const OriginalPromptType = {
  STATIC: 'static',
  GENAI: 'genai',
  BRANCH: 'branch',
  CUSTOM: 'custom',
  CONVERSATION: 'conversation',
} as const;
export type OriginalPromptType = (typeof OriginalPromptType)[keyof typeof OriginalPromptType];
const PROMPT_TYPES = Object.values(OriginalPromptType);

export const MAX_BODY_LENGTH = 4096;
export const MIN_BRANCH_OPTIONS = 2;
export const MAX_BRANCH_OPTIONS = 10;
export const MAX_BRANCH_LABEL_LENGTH = 100;
export const MAX_BRANCH_BODY_LENGTH = 1000;

const scheduleField = (name: string, range: string) =>
  z
    .number({ error: () => `must be a number (${range})` })
    .optional()
    .describe(`${name}: ${range}; omitted = any`);

export const originalScheduleSchema = z
  .object({
    minute: scheduleField('minute', '0–59'),
    hour: scheduleField('hour', '0–23'),
    day: scheduleField('day of the month', '1–31'),
    month: scheduleField('month', '1–12'),
    weekday: scheduleField('weekday', '0–6, Sunday = 0'),
    timezone: z.string().max(100).optional().describe('IANA time zone such as "America/Toronto"; UTC when absent'),
  })
  .describe('When to send: every minute that matches all the fields set, in the time zone');

export const branchOptionSchema = z.object({
  label: z.string().describe('Shown as a numbered option (at most 100 characters)'),
  body: z.string().describe('What the option means (at most 1000 characters); recorded with the choice'),
});

const text = (description: string) =>
  z
    .string({ error: () => 'must be a string' })
    .optional()
    .describe(description);

export const originalPromptSchema = z
  .object({
    to: text('Recipient phone number: E.164, or digits only with the country code (15551234567)'),
    type: text(`One of ${PROMPT_TYPES.join(', ')}; default static`),
    schedule: originalScheduleSchema.optional(),
    state: text('custom prompts: the flow state it belongs to (recorded with the message)'),
    body: text('static and custom: the message; branch: the question above the options'),
    system_prompt: text('genai: the system prompt sent to the model'),
    user_prompt: text('genai: the user prompt sent to the model'),
    branch_options: z.array(branchOptionSchema).optional().describe('branch: 2–10 options'),
  })
  .describe('A prompt of the original PromptPipe API');

export type OriginalPrompt = z.output<typeof originalPromptSchema>;
export type OriginalScheduleInput = z.output<typeof originalScheduleSchema>;

/** What a prompt turns into: the checked, normalised content of one send. */
export type PromptContent =
  | { type: 'static' | 'custom'; body: string; state?: string }
  | { type: 'genai'; systemPrompt: string; userPrompt: string }
  | { type: 'branch'; body: string; options: { label: string; body: string }[] };

const blank = (value: string | undefined): boolean => value === undefined || value.trim() === '';

function branchProblem(options: OriginalPrompt['branch_options']): string | undefined {
  if (!options || options.length === 0) return 'branch options are required for branch prompts';
  if (options.length < MIN_BRANCH_OPTIONS) return `branch prompts need at least ${MIN_BRANCH_OPTIONS} branch_options`;
  if (options.length > MAX_BRANCH_OPTIONS) return `branch prompts take at most ${MAX_BRANCH_OPTIONS} branch_options`;
  for (const [index, option] of options.entries()) {
    const where = `branch_options.${index}`;
    if (blank(option.label)) return `${where}.label must not be empty`;
    if (option.label.length > MAX_BRANCH_LABEL_LENGTH) {
      return `${where}.label is longer than ${MAX_BRANCH_LABEL_LENGTH} characters`;
    }
    if (blank(option.body)) return `${where}.body must not be empty`;
    if (option.body.length > MAX_BRANCH_BODY_LENGTH) {
      return `${where}.body is longer than ${MAX_BRANCH_BODY_LENGTH} characters`;
    }
  }
  return undefined;
}

/** The prompt's type, `static` when omitted; a string that names no type is a problem. */
export function promptTypeOf(prompt: OriginalPrompt): OriginalPromptType | { problem: string } {
  const type = prompt.type?.trim() || OriginalPromptType.STATIC;
  if ((PROMPT_TYPES as readonly string[]).includes(type)) return type as OriginalPromptType;
  return { problem: `invalid prompt type "${prompt.type}": use one of ${PROMPT_TYPES.join(', ')}` };
}

/** The content of a valid prompt, or the first rule it breaks. */
export function promptContent(prompt: OriginalPrompt): PromptContent | { problem: string } {
  const type = promptTypeOf(prompt);
  if (typeof type === 'object') return type;
  switch (type) {
    case OriginalPromptType.STATIC:
    case OriginalPromptType.CUSTOM: {
      const body = prompt.body ?? '';
      if (blank(body)) return { problem: `body is required for ${type} prompts` };
      if (body.length > MAX_BODY_LENGTH) return { problem: `body is longer than ${MAX_BODY_LENGTH} characters` };
      const state = prompt.state?.trim();
      return type === OriginalPromptType.CUSTOM && state ? { type, body, state } : { type, body };
    }
    case OriginalPromptType.GENAI:
      if (blank(prompt.system_prompt)) return { problem: 'system_prompt is required for genai prompts' };
      if (blank(prompt.user_prompt)) return { problem: 'user_prompt is required for genai prompts' };
      return { type, systemPrompt: prompt.system_prompt ?? '', userPrompt: prompt.user_prompt ?? '' };
    case OriginalPromptType.BRANCH: {
      const problem = branchProblem(prompt.branch_options);
      if (problem) return { problem };
      const body = prompt.body ?? '';
      if (body.length > MAX_BODY_LENGTH) return { problem: `body is longer than ${MAX_BODY_LENGTH} characters` };
      return { type, body, options: (prompt.branch_options ?? []).map(({ label, body }) => ({ label, body })) };
    }
    case OriginalPromptType.CONVERSATION:
      return {
        problem:
          'type conversation is not sent here: enrol the participant with POST /conversation/participants and ' +
          'the coach runs the conversation (docs/migrating.md)',
      };
  }
}
