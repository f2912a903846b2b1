/**
 * `POST /send` and `POST /schedule` of the original PromptPipe API (its docs/api.md): the same request fields,
 * statuses and envelopes. Thin: validate, then the sender (`src/original/original-sender.ts`) or a durable
 * schedule (`original-schedule-jobs.ts`).
 *
 * Deviations, each where the original was broken (docs/migrating.md): an invalid schedule value is a 400 (the
 * original answered 500); the recipient is enrolled when nobody holds the number; `200` means recorded and queued
 * for delivery (the outbox retries), not handed to WhatsApp.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../../domain/clock.ts';
import { AppError } from '../../../domain/errors.ts';
import type { NewId } from '../../../domain/ids.ts';
import type { OriginalSchedule } from '../../../domain/original-schedule.ts';
import { toE164 } from '../../../domain/phone.ts';
import { ok } from '../../../http/envelope.ts';
import { envelope, errorResponse } from '../../../http/envelope-schemas.ts';
import {
  type OriginalPrompt,
  OriginalPromptType,
  type OriginalScheduleInput,
  originalPromptSchema,
  type PromptContent,
  promptContent,
} from '../../../original/original-prompt.ts';
import { nextRunAfter, scheduleProblems } from '../../../original/original-schedule.ts';
import { createSchedule } from '../../../original/original-schedule-jobs.ts';
import type { OriginalSender } from '../../../original/original-sender.ts';
import type { Store } from '../../../store/store.ts';
import { ORIGINAL_ERRORS, ORIGINAL_TAGS } from './original-schemas.ts';

export interface PromptRouteOptions {
  store: Store;
  sender: OriginalSender;
  clock: Clock;
  newId: NewId;
  defaultCountry: string;
  /** `DEFAULT_SCHEDULE`: used by `POST /schedule` when the prompt has no schedule. */
  defaultSchedule: OriginalSchedule | undefined;
  /** Whether a model is configured: without one, genai prompts cannot be scheduled (as in the original). */
  llmConfigured: boolean;
  /** Called after a job is committed (`runner.notify`). */
  onJobEnqueued?: () => void;
}

/** The recipient (E.164) and the content of a valid prompt, or a 400 naming the first problem. */
function checkedPrompt(
  prompt: OriginalPrompt,
  defaultCountry: string,
): { prompt: OriginalPrompt; to: string; content: PromptContent } {
  if (!prompt.to?.trim()) throw new AppError('invalid_input', 'to is required: the recipient phone number');
  const to = toE164(prompt.to, defaultCountry, 'to');
  const content = promptContent(prompt);
  if ('problem' in content) throw new AppError('invalid_input', content.problem);
  return { prompt, to, content };
}

/** The schedule with only the fields that are set (the job payload keeps what was asked, no `undefined`s). */
function setFields(schedule: OriginalScheduleInput): OriginalSchedule {
  return Object.fromEntries(
    Object.entries(schedule).filter(([, value]) => value !== undefined && value !== ''),
  ) as OriginalSchedule;
}

export function registerPromptRoutes(app: FastifyInstance, options: PromptRouteOptions): void {
  const { store, sender, clock } = options;
  const api = app.withTypeProvider<ZodTypeProvider>();
  const withdrawn = { 409: errorResponse('The participant has withdrawn (opted out)') };
  const send = {
    operationId: 'sendPrompt',
    tags: ORIGINAL_TAGS,
    summary: 'Send a prompt now (static, genai, branch, custom); the recipient is enrolled if unknown',
    body: originalPromptSchema,
    response: {
      200: envelope('Recorded in the transcript and queued for delivery ("Message sent successfully")', z.unknown()),
      ...ORIGINAL_ERRORS,
      ...withdrawn,
      500: errorResponse('The model failed to generate a genai prompt'),
    },
  };
  api.post('/send', { config: { permission: 'message' }, schema: send }, async (request) => {
    const { to, content } = checkedPrompt(request.body, options.defaultCountry);
    const known = await store.participants.getByPhone(to);
    const made = await sender.make(content, known?.id);
    const participant = known ?? (await sender.recipient(to));
    const sent = await sender.send(participant, made, 'api');
    return ok({ participant_id: participant.id, outbound_id: sent.id }, 'Message sent successfully');
  });

  const schedule = {
    operationId: 'schedulePrompt',
    tags: ORIGINAL_TAGS,
    summary: 'Schedule a recurring prompt (schedule fields in a time zone, or DEFAULT_SCHEDULE)',
    body: originalPromptSchema,
    response: {
      201: envelope('Scheduled; result is the timer id (sched_\u2026)', z.string()),
      ...ORIGINAL_ERRORS,
      ...withdrawn,
    },
  };
  api.post('/schedule', { config: { permission: 'message' }, schema: schedule }, async (request, reply) => {
    const { prompt, to, content } = checkedPrompt(request.body, options.defaultCountry);
    if (content.type === OriginalPromptType.GENAI && !options.llmConfigured) {
      throw new AppError('invalid_input', 'GenAI client not configured: set OPENAI_API_KEY or OPENAI_BASE_URL');
    }
    const asked = prompt.schedule ?? options.defaultSchedule;
    if (!asked) {
      throw new AppError('invalid_input', 'Missing required field: schedule (and DEFAULT_SCHEDULE is not set)');
    }
    const schedule = setFields(asked);
    const problems = scheduleProblems(schedule);
    if (problems.length > 0) throw new AppError('invalid_input', `invalid schedule: ${problems.join('; ')}`);
    if (!nextRunAfter(schedule, clock.now())) {
      throw new AppError('invalid_input', 'invalid schedule: no day matches it (such as 31 February)');
    }
    const participant = await sender.recipient(to);
    if (participant.status === 'withdrawn') {
      throw new AppError(
        'conflict',
        `participant ${participant.id} (${to}) has withdrawn: no messages are sent to them`,
      );
    }
    const created = await createSchedule(
      { store, newId: options.newId },
      { participantId: participant.id, schedule, prompt: content, now: clock.now() },
    );
    if (!created) throw new AppError('invalid_input', 'invalid schedule: no day matches it');
    options.onJobEnqueued?.();
    return reply.code(201).send(ok(created.scheduleId, 'Scheduled successfully'));
  });
}
