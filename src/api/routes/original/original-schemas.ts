/**
 * The shapes of the original PromptPipe API's other requests and of its results (the prompt itself is in
 * `src/original/original-prompt.ts`), from its docs/api.md. Validation and the OpenAPI document use the same schemas.
 */
import { z } from 'zod';
import { AppError } from '../../../domain/errors.ts';
import { errorResponse } from '../../../http/envelope-schemas.ts';
import { originalScheduleSchema } from '../../../original/original-prompt.ts';
import { COMMON_ERRORS } from '../../openapi.ts';

/** The OpenAPI tag and common errors of the original API's operations. */
export const ORIGINAL_TAGS = ['original'];
export const ORIGINAL_ERRORS = {
  400: errorResponse('Invalid input: the message says which field and why (and how to write a phone number)'),
  401: COMMON_ERRORS[401],
};

const instant = z.string().max(40).optional().describe('Unix seconds, a date (YYYY-MM-DD, UTC) or an ISO 8601 time');

export const recordQuerySchema = z.object({
  since: instant,
  until: instant,
  limit: z.coerce.number().int().min(1).max(100_000).optional().describe('Only the newest N (still oldest first)'),
});

export const receiptsQuerySchema = recordQuerySchema.extend({
  to: z.string().max(40).optional().describe('Only this recipient (any phone format)'),
});

export const responsesQuerySchema = recordQuerySchema.extend({
  from: z.string().max(40).optional().describe('Only this sender (any phone format)'),
});

export const responseBodySchema = z
  .object({
    from: z.string({ error: () => 'must be a string such as "15551234567"' }).optional(),
    body: z.string({ error: () => 'must be a string' }).optional(),
    time: z
      .number({ error: () => 'must be a Unix time in seconds (the server sets it anyway)' })
      .optional()
      .describe('Ignored: the server sets the time (as the original did)'),
  })
  .describe('A response to record');

export const receiptSchema = z.object({
  to: z.string().describe('E.164 recipient'),
  status: z.enum(['sent', 'delivered', 'read', 'failed', 'cancelled']),
  time: z.number().int().describe('Unix seconds'),
  delivery_status: z.string().describe('PromptPipe’s own status (undelivered, not_delivered… read as failed)'),
  source: z.enum(['delivery', 'imported']),
});

export const responseSchema = z.object({
  from: z.string().describe('E.164 sender'),
  body: z.string(),
  time: z.number().int().describe('Unix seconds'),
  source: z.enum(['message', 'api', 'imported']),
  choice: z
    .object({ question: z.string().nullable(), option: z.string() })
    .optional()
    .describe('A reply to numbered options (a branch prompt): the option chosen'),
});

export const timerInfoSchema = z.object({
  id: z.string().describe('sched_… for a POST /schedule schedule, else the job id'),
  type: z.enum(['once', 'recurring']),
  scheduled_at: z.string(),
  expires_at: z.string().optional().describe('once timers: when it fires'),
  schedule: originalScheduleSchema.optional(),
  next_run: z.string().optional().describe('recurring timers: when it fires next'),
  remaining: z.string().describe('Go duration, e.g. 5m0s'),
  description: z.string(),
  kind: z.string().describe('The job kind: original_schedule, daily_prompt, daily_prompt_reminder, deliver_message…'),
  participant_id: z.string().nullable().describe('The owner'),
  due_at: z.string(),
  status: z.enum(['pending', 'running']),
  job_id: z.string(),
});

export const timerListSchema = z.object({ timers: z.array(timerInfoSchema), count: z.number().int() });

export const timerCancelSchema = z.object({
  message: z.string(),
  timerID: z.string(),
  canceled: z.literal(true),
});

export const originalStatsSchema = z.object({
  total_responses: z.number().int(),
  responses_per_sender: z.record(z.string(), z.number().int()),
  avg_response_length: z.number().describe('In characters'),
});

/** Reads a `since`/`until` bound: Unix seconds, a date or an ISO time. */
export function parseInstant(value: string | undefined, name: string): Date | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const text = value.trim();
  const date = /^\d+$/.test(text) ? new Date(Number(text) * 1000) : new Date(text);
  if (Number.isNaN(date.getTime())) {
    throw new AppError(
      'invalid_input',
      `${name} "${value}" is not Unix seconds, a date (YYYY-MM-DD) or an ISO 8601 time`,
    );
  }
  return date;
}
