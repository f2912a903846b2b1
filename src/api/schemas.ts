/**
 * The API's request and response shapes as zod schemas: requests are validated with them, and the OpenAPI document
 * is generated from the very same schemas (`z.toJSONSchema`), so documentation and validation cannot drift apart.
 * Field names are the public contract (snake_case).
 */
import { z } from 'zod';
import { ConversationState } from '../domain/conversation-state.ts';
import { PARTICIPANT_STATUSES, ParticipantStatus } from '../domain/participant.ts';

/** Optional free-text descriptive fields, shared by enrollment and update. */
const detailFields = {
  name: z.string().max(200).optional().describe('Display name; used in the participant background the model sees.'),
  gender: z.string().max(100).optional(),
  ethnicity: z.string().max(200).optional(),
  background: z.string().max(4000).optional().describe('Free-text context for the coach.'),
  timezone: z
    .string()
    .max(100)
    .optional()
    .describe('IANA time zone such as "America/New_York"; the default time zone of schedules.'),
  language: z
    .string()
    .max(100)
    .optional()
    .describe('BCP 47 language tag such as "en", "es" or "pt-BR"; enrollment defaults to DEFAULT_LANGUAGE.'),
  channel: z
    .string()
    .max(50)
    .optional()
    .describe('One of the enabled channels (PROMPTPIPE_CHANNEL); default the first one.'),
};

/** A custom message for a wrong value (a missing one reads "… is required", see validation.ts). */
const wrongValue = (message: string) => (): string => message;

export const participantStatusSchema = z.enum(ParticipantStatus, {
  error: wrongValue(`must be one of ${PARTICIPANT_STATUSES.join(', ')}`),
});

export const enrollmentBodySchema = z
  .object({
    phone_number: z
      .string({ error: wrongValue('must be a string such as "+15551234567"') })
      .describe('Any common format; canonicalised to E.164. National numbers use DEFAULT_COUNTRY.'),
    ...detailFields,
  })
  .describe('Enrollment request');

export const updateBodySchema = z
  .object({ ...detailFields, status: participantStatusSchema.optional() })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    message:
      'nothing to update: send at least one of name, gender, ethnicity, background, timezone, language, channel, status',
  })
  .describe('Partial update');

export const transitionBodySchema = z.object({
  target_state: z.enum([ConversationState.INTAKE, ConversationState.FEEDBACK], {
    error: wrongValue(`must be ${ConversationState.INTAKE} or ${ConversationState.FEEDBACK}`),
  }),
  reason: z.string().max(1000).optional(),
});

export const organiserMessageBodySchema = z.object({
  text: z.string().trim().min(1, 'must not be empty').max(4096),
});

export const clockBodySchema = z
  .object({
    advance_ms: z.number().int().min(0).optional().describe('Move the clock forward by this many milliseconds.'),
    set_to: z.iso.datetime({ offset: true }).optional().describe('Move the clock to this ISO time (not backwards).'),
  })
  .refine((body) => (body.advance_ms === undefined) !== (body.set_to === undefined), {
    message: 'send exactly one of advance_ms or set_to',
  });

export const participantIdParamsSchema = z.object({ id: z.string().min(1).max(200) });

export const listQuerySchema = z.object({ status: participantStatusSchema.optional() });

export const historyQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional().describe('Newest N entries (default 100).'),
  before: z.coerce.number().int().min(1).optional().describe('Entries with an id below this one (paging cursor).'),
});

const booleanText = z.enum(['true', 'false', '1', '0'], { error: wrongValue('must be true or false') });

export const deleteQuerySchema = z.object({
  purge: booleanText.optional().describe('Also delete the transcript (default: it is kept as study data).'),
});

// ---------------------------------------------------------------------------------------------------------------
// Responses (documentation)

export const participantSchema = z.object({
  id: z.string(),
  phone_number: z.string().describe('E.164'),
  name: z.string(),
  gender: z.string(),
  ethnicity: z.string(),
  background: z.string(),
  timezone: z.string(),
  language: z.string().describe('BCP 47 language tag'),
  channel: z.string().describe('The channel the participant is reached on.'),
  arm: z.string().optional().describe('The trial arm in force, when a study design (STUDY_DESIGN_FILE) is loaded.'),
  chat_url: z
    .string()
    .optional()
    .describe(
      'Web-chat participants only: their private chat link, absolute (PROMPTPIPE_PUBLIC_URL + /chat/<token>) when ' +
        'PROMPTPIPE_PUBLIC_URL is set, else the path /chat/<token> on this server.',
    ),
  status: participantStatusSchema,
  enrolled_at: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const historyEntrySchema = z.object({
  id: z.number().int(),
  role: z.enum(['user', 'assistant', 'tool', 'system']),
  kind: z.string().describe('message, reply, tool_call, tool_result, proactive, poll, organiser, debug, notice'),
  content: z.string(),
  tool_calls: z
    .array(
      z.object({
        id: z.string(),
        type: z.literal('function'),
        function: z.object({ name: z.string(), arguments: z.string() }),
      }),
    )
    .optional(),
  tool_call_id: z.string().optional(),
  tool_name: z.string().optional(),
  module: z.string().optional(),
  model: z.string().optional(),
  llm_call_id: z.number().int().optional(),
  provenance: z
    .object({
      llm_call_id: z.number().int(),
      purpose: z.string(),
      model: z.string(),
      provider_host: z.string(),
      temperature: z.number().nullable(),
      prompt_file: z.string().nullable(),
      prompt_version: z.string().nullable().describe('12 hex characters of SHA-256 of the system prompt text sent'),
      prompt_tokens: z.number().int().nullable(),
      completion_tokens: z.number().int().nullable(),
      total_tokens: z.number().int().nullable(),
      latency_ms: z.number().int(),
      outcome: z.string(),
      created_at: z.string(),
    })
    .optional()
    .describe('The LLM call that produced this assistant entry'),
  outbound_id: z.string().optional().describe('Outbound messages: the id the channel received.'),
  delivery: z
    .object({
      status: z
        .string()
        .describe(
          'queued, sent, delivered, read, failed, undelivered, not_delivered (only recorded; `error` says why)',
        ),
      at: z.string(),
      channel: z.string(),
      error_code: z.string().optional(),
      error: z.string().optional(),
    })
    .optional()
    .describe('Outbound messages: the latest delivery receipt.'),
  created_at: z.string(),
});

export const stateSchema = z.object({
  current_state: z.string().nullable(),
  conversation_state: z.enum([ConversationState.INTAKE, ConversationState.FEEDBACK]),
  profile: z.record(z.string(), z.unknown()).nullable(),
  schedules: z.array(
    z.object({
      id: z.string(),
      type: z.enum(['fixed', 'random']),
      fixed_time: z.string().optional().describe('HH:MM local'),
      random_start_time: z.string().optional(),
      random_end_time: z.string().optional(),
      timezone: z.string(),
      created_at: z.string(),
      timer_id: z.string().describe('The pending daily_prompt job'),
    }),
  ),
  pending_jobs: z.array(
    z.object({
      id: z.string(),
      kind: z.string(),
      run_at: z.string(),
      dedup_key: z.string().nullable(),
      status: z.string(),
    }),
  ),
  data: z.record(z.string(), z.string()),
});

export const transitionResultSchema = z.object({
  participant_id: z.string(),
  from: z.string(),
  to: z.string(),
  changed: z.boolean(),
});

export const organiserMessageResultSchema = z.object({
  id: z.string().describe('Outbound id (the delivery idempotency key)'),
  participant_id: z.string(),
  kind: z.literal('organiser'),
  text: z.string(),
});

export const deleteResultSchema = z.object({ id: z.string(), purged_transcript_entries: z.number().int() });

export const clockResultSchema = z.object({ now: z.string(), jobs_run: z.number().int() });

export const healthSchema = z.object({
  status: z.enum(['healthy', 'unhealthy']),
  timestamp: z.string(),
  active_participants: z.number().int().optional(),
  message: z.string().optional(),
  channels: z.record(z.string(), z.object({ state: z.string() })).optional(),
  instance_id: z.string().optional().describe('PROMPTPIPE_INSTANCE_ID: which instance answered'),
  llm: z
    .object({
      status: z.enum(['ok', 'degraded', 'not_configured']),
      consecutive_failures: z.number().int(),
      retry_after: z.string().optional(),
      last_error: z.string().optional(),
      last_failure_at: z.string().optional(),
    })
    .optional()
    .describe(
      'The model: degraded while its calls fail or back off, not_configured without a model (the server itself ' +
        'stays healthy, HTTP 200).',
    ),
});
