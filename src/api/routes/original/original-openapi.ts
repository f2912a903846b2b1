/** The OpenAPI paths of the original PromptPipe API (its docs/api.md), tagged `original`. */
import { z } from 'zod';
import { originalPromptSchema } from '../../../original/original-prompt.ts';
import {
  originalStatsSchema,
  receiptSchema,
  receiptsQuerySchema,
  responseBodySchema,
  responseSchema,
  responsesQuerySchema,
  timerCancelSchema,
  timerInfoSchema,
  timerListSchema,
} from './original-schemas.ts';

type JsonObject = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  return rest;
}

const json = (schema: JsonObject) => ({ 'application/json': { schema } });

const error = (description: string): JsonObject => ({
  description,
  content: json({ $ref: '#/components/schemas/ErrorEnvelope' }),
});

const envelope = (description: string, result?: JsonObject): JsonObject => ({
  description,
  content: json({
    type: 'object',
    required: ['status'],
    properties: {
      status: { type: 'string', enum: ['ok'] },
      message: { type: 'string' },
      ...(result ? { result } : {}),
    },
  }),
});

const plain = (description: string, schema: z.ZodType): JsonObject => ({
  description,
  content: json(jsonSchema(schema, 'output')),
});

function queryParameters(schema: z.ZodObject): JsonObject[] {
  const properties = (jsonSchema(schema, 'input')['properties'] ?? {}) as Record<string, JsonObject>;
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: false,
    ...(typeof property['description'] === 'string' ? { description: property['description'] } : {}),
    schema: property,
  }));
}

const COMMON = {
  '400': error('Invalid input: the message says which field and why (and how to write a phone number)'),
  '401': error('Missing or wrong bearer token (when PROMPTPIPE_API_TOKEN is set)'),
};
const tags = ['original'];
const promptBody = { required: true, content: json(jsonSchema(originalPromptSchema, 'input')) };
const TIMER_ID = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'Timer id' };

/** Also merged into `GET /stats` (see research-openapi.ts): the original's response figures. */
export const originalStatsJsonSchema = (): JsonObject => jsonSchema(originalStatsSchema, 'output');

export function originalApiOpenApiPaths(): JsonObject {
  return {
    '/send': {
      post: {
        tags,
        summary: 'Send a prompt now (static, genai, branch, custom); the recipient is enrolled if unknown',
        requestBody: promptBody,
        responses: {
          '200': envelope('Recorded in the transcript and queued for delivery ("Message sent successfully")'),
          ...COMMON,
          '409': error('The participant has withdrawn (opted out)'),
          '500': error('The model failed to generate a genai prompt'),
        },
      },
    },
    '/schedule': {
      post: {
        tags,
        summary: 'Schedule a recurring prompt (schedule fields in a time zone, or DEFAULT_SCHEDULE)',
        requestBody: promptBody,
        responses: {
          '201': envelope('Scheduled; result is the timer id (sched_…)', { type: 'string' }),
          ...COMMON,
          '409': error('The participant has withdrawn (opted out)'),
        },
      },
    },
    '/receipts': {
      get: {
        tags,
        summary: 'Delivery receipts of outbound messages, oldest first',
        parameters: queryParameters(receiptsQuerySchema),
        responses: { '200': envelope('Receipts', jsonSchema(z.array(receiptSchema), 'output')), ...COMMON },
      },
    },
    '/response': {
      post: {
        tags,
        summary: 'Record a response (the server sets its time)',
        requestBody: { required: true, content: json(jsonSchema(responseBodySchema, 'input')) },
        responses: { '201': envelope('Recorded ("Response recorded successfully")'), ...COMMON },
      },
    },
    '/responses': {
      get: {
        tags,
        summary: 'Responses: inbound messages and recorded responses, oldest first',
        parameters: queryParameters(responsesQuerySchema),
        responses: { '200': envelope('Responses', jsonSchema(z.array(responseSchema), 'output')), ...COMMON },
      },
    },
    '/timers': {
      get: {
        tags,
        summary: 'Every pending timer (durable job) with its kind, owner and due time; no envelope',
        responses: { '200': plain('Timers', timerListSchema), ...COMMON },
      },
    },
    '/timers/{id}': {
      parameters: [TIMER_ID],
      get: {
        tags,
        summary: 'One timer; no envelope',
        responses: { '200': plain('The timer', timerInfoSchema), ...COMMON, '404': error('Timer not found') },
      },
      delete: {
        tags,
        summary: 'Cancel a timer (recorded as a timer-cancelled event); no envelope',
        responses: {
          '200': plain('Cancelled', timerCancelSchema),
          ...COMMON,
          '404': error('Timer not found'),
          '409': error('The timer is running right now; cancel it again in a moment'),
        },
      },
    },
  };
}
