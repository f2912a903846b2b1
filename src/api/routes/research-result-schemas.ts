/** What the research endpoints answer (export, bulk import, broadcasts, statistics), for the OpenAPI document. */
import { z } from 'zod';
import { originalStatsSchema } from './original/original-schemas.ts';

const FIGURES = [
  'prompts_sent',
  'prompts_answered',
  'median_reply_latency_seconds',
  'done',
  'done_rate',
  'reminders_sent',
  'llm_calls',
  'llm_errors',
  'llm_prompt_tokens',
  'llm_completion_tokens',
  'llm_total_tokens',
  'failed_deliveries',
] as const;

const figuresSchema = z.object(Object.fromEntries(FIGURES.map((name) => [name, z.number().nullable().optional()])));

export const statsResultSchema = z.object({
  from: z.string().nullable(),
  to: z.string().nullable(),
  participants: z.looseObject({}),
  totals: figuresSchema,
  days: z.array(figuresSchema),
  // The original PromptPipe's figures (docs/api.md, "The original API").
  ...originalStatsSchema.shape,
});

export const broadcastProgressSchema = z.object({
  id: z.string(),
  text: z.string(),
  filter: z.looseObject({}),
  recipients: z.number().int(),
  rate_per_minute: z.number(),
  created_at: z.iso.datetime(),
  queued: z.number().int(),
  sent: z.number().int().describe('Delivered to the channel'),
  failed: z.number().int(),
  skipped: z.number().int().describe('Withdrawn (opted out) or deleted before their slot'),
});

export const importResultSchema = z.object({
  dry_run: z.boolean(),
  partial: z.boolean(),
  applied: z.boolean(),
  total_rows: z.number().int(),
  enrolled: z.array(
    z.object({
      row: z.number().int().describe('1 = the first row after the header'),
      participant_id: z.string().nullable().describe('null in a dry run'),
      phone_number: z.string(),
      chat_url: z.string().optional().describe('Web-chat participants: their private chat link (as in Participant)'),
    }),
  ),
  skipped: z.array(z.looseObject({})).describe('Already-enrolled numbers'),
  errors: z.array(z.object({ row: z.number().int(), field: z.string(), problem: z.string() })),
  greetings: z.looseObject({}),
});
