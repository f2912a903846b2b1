/**
 * The response envelope (envelope.ts) as zod schemas, for the route declarations every HTTP route shares (the API's,
 * the channels' webhooks): what `@fastify/swagger` documents (api/openapi.ts). The error envelope is listed under
 * `components.schemas` as `ErrorEnvelope` and referred to by `$ref`.
 */
import { z } from 'zod';

export const errorEnvelopeSchema = z.object({ status: z.literal('error'), message: z.string() });
z.globalRegistry.add(errorEnvelopeSchema, { id: 'ErrorEnvelope' });

/** The envelope `{status, message?, result}` of a successful answer, around a result schema. */
export function envelope(description: string, result?: z.ZodType) {
  return z
    .object({ status: z.literal('ok'), message: z.string().optional(), ...(result ? { result } : {}) })
    .describe(description);
}

/** An error answer: the error envelope, with what the status means for this operation. */
export function errorResponse(description: string) {
  return { description, content: { 'application/json': { schema: errorEnvelopeSchema } } };
}
