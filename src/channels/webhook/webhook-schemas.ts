/**
 * The webhook channel's bodies as zod schemas: what a gateway posts to `POST /webhook/inbound` (validated with it, and
 * documented from it in the OpenAPI document) and what the channel posts to `PROMPTPIPE_WEBHOOK_URL`. Field names are
 * the public contract (snake_case).
 */
import { z } from 'zod';

export const webhookInboundBodySchema = z
  .object({
    from: z.string().min(1).describe('Sender phone number (any common format)'),
    text: z.string().max(16_384).default(''),
    id: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .describe('Provider message id: a repeated id is ignored (signed without one: the same signed request is).'),
    timestamp: z.iso
      .datetime({ offset: true })
      .optional()
      .describe("The provider's time; refused (400) outside PROMPTPIPE_WEBHOOK_TOLERANCE of the server clock."),
    poll_answer: z
      .object({ poll_id: z.string().min(1).optional(), option: z.string().min(1) })
      .optional()
      .describe('The chosen option of a poll PromptPipe sent (poll_id = the outbound poll.id).'),
  })
  .refine((body) => body.text.trim() !== '' || body.poll_answer !== undefined, {
    message: 'text must not be empty (or send a poll_answer)',
  });

export const webhookOutboundBodySchema = z.object({
  id: z.string().describe('Outbound id, stable across retries: the idempotency key'),
  participant_id: z.string(),
  to: z.string().describe('E.164'),
  kind: z.enum(['text', 'poll']),
  text: z.string(),
  poll: z.object({ id: z.string(), question: z.string(), options: z.array(z.string()) }).optional(),
});
