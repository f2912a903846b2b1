/**
 * The OpenAPI 3.1 document of the HTTP API, served at `GET /openapi.json`. Written by hand route by route, with
 * every body and result schema generated from the zod schemas the routes validate with (`schemas.ts`).
 */
import { z } from 'zod';
import { researchOpenApiPaths } from '../research/research-openapi.ts';
import { originalApiOpenApiPaths } from './routes/original/original-openapi.ts';
import { studyOpenApiPaths } from './routes/study-openapi.ts';
import {
  clockBodySchema,
  clockResultSchema,
  deleteQuerySchema,
  deleteResultSchema,
  enrollmentBodySchema,
  healthSchema,
  historyEntrySchema,
  historyQuerySchema,
  listQuerySchema,
  organiserMessageBodySchema,
  organiserMessageResultSchema,
  participantSchema,
  stateSchema,
  transitionBodySchema,
  transitionResultSchema,
  updateBodySchema,
  webhookInboundBodySchema,
} from './schemas.ts';

type JsonObject = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  return rest;
}

function requestBody(schema: z.ZodType): JsonObject {
  return { required: true, content: { 'application/json': { schema: jsonSchema(schema, 'input') } } };
}

/** The envelope `{status, message?, result}` around a result schema. */
function envelope(description: string, result?: z.ZodType): JsonObject {
  const properties: JsonObject = {
    status: { type: 'string', enum: ['ok'] },
    message: { type: 'string' },
    ...(result ? { result: jsonSchema(result, 'output') } : {}),
  };
  return {
    description,
    content: { 'application/json': { schema: { type: 'object', required: ['status'], properties } } },
  };
}

const errorResponse = (description: string): JsonObject => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
});

const COMMON_ERRORS: JsonObject = {
  '400': errorResponse('Invalid input: the message says which field and why'),
  '401': errorResponse('Missing or wrong bearer token (when PROMPTPIPE_API_TOKEN is set)'),
  '429': errorResponse('Too many wrong bearer tokens from this address; Retry-After (seconds) says when to try again'),
};
const NOT_FOUND = { '404': errorResponse('Unknown participant id') };

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

const ID_PARAMETER = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description: 'Participant id',
};

export function buildOpenApiDocument(options: { version: string }): JsonObject {
  const participantTag = ['participants'];
  return {
    openapi: '3.1.0',
    info: {
      title: 'PromptPipe API',
      version: options.version,
      description:
        'LLM habit-coaching conversations for research studies. Every JSON response is an envelope ' +
        '{"status":"ok"|"error","message"?,"result"?}, except GET /health and GET /metrics.',
    },
    security: [{ bearerAuth: [] }],
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'PROMPTPIPE_API_TOKEN, when set' },
        dashboardSession: {
          type: 'apiKey',
          in: 'cookie',
          name: 'promptpipe_session',
          description: 'a signed-in dashboard session: accepted instead of the token by the exports and /stats only',
        },
        webhookSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'X-PromptPipe-Signature',
          description:
            'sha256=<hex HMAC-SHA256 of "<X-PromptPipe-Timestamp>.<raw body>" with PROMPTPIPE_WEBHOOK_SECRET>, when set',
        },
        webhookTimestamp: {
          type: 'apiKey',
          in: 'header',
          name: 'X-PromptPipe-Timestamp',
          description: 'the signing time in Unix seconds, within PROMPTPIPE_WEBHOOK_TOLERANCE (default 5 minutes)',
        },
      },
      schemas: {
        ErrorEnvelope: {
          type: 'object',
          required: ['status', 'message'],
          properties: { status: { type: 'string', enum: ['error'] }, message: { type: 'string' } },
        },
        Participant: jsonSchema(participantSchema, 'output'),
      },
    },
    paths: {
      '/conversation/participants': {
        post: {
          tags: participantTag,
          summary: 'Enroll a participant and send the greeting',
          requestBody: requestBody(enrollmentBodySchema),
          responses: {
            '201': envelope('Enrolled', participantSchema),
            ...COMMON_ERRORS,
            '409': errorResponse('The phone number is already enrolled'),
            '413': errorResponse('Body too large'),
          },
        },
        get: {
          tags: participantTag,
          summary: 'List participants',
          parameters: queryParameters(listQuerySchema),
          responses: {
            '200': envelope('Participants, oldest enrolment first', z.array(participantSchema)),
            ...COMMON_ERRORS,
          },
        },
      },
      '/conversation/participants/{id}': {
        parameters: [ID_PARAMETER],
        get: {
          tags: participantTag,
          summary: 'One participant',
          responses: { '200': envelope('The participant', participantSchema), ...COMMON_ERRORS, ...NOT_FOUND },
        },
        put: {
          tags: participantTag,
          summary: 'Partial update; leaving "active" cancels pending jobs and stops proactive messages',
          requestBody: requestBody(updateBodySchema),
          responses: { '200': envelope('Updated', participantSchema), ...COMMON_ERRORS, ...NOT_FOUND },
        },
        delete: {
          tags: participantTag,
          summary: 'Unregister: notice, cancel jobs, clear state, remove; the transcript is kept unless purge=true',
          parameters: queryParameters(deleteQuerySchema),
          responses: { '200': envelope('Unregistered', deleteResultSchema), ...COMMON_ERRORS, ...NOT_FOUND },
        },
      },
      '/conversation/participants/{id}/history': {
        parameters: [ID_PARAMETER],
        get: {
          tags: participantTag,
          summary: 'The transcript, oldest first, paged',
          parameters: queryParameters(historyQuerySchema),
          responses: {
            '200': envelope('Transcript entries', z.array(historyEntrySchema)),
            ...COMMON_ERRORS,
            ...NOT_FOUND,
          },
        },
      },
      '/conversation/participants/{id}/state': {
        parameters: [ID_PARAMETER],
        get: {
          tags: participantTag,
          summary: 'Conversation state, profile, schedules, pending jobs and data keys',
          responses: { '200': envelope('State', stateSchema), ...COMMON_ERRORS, ...NOT_FOUND },
        },
      },
      '/conversation/participants/{id}/transition': {
        parameters: [ID_PARAMETER],
        post: {
          tags: participantTag,
          summary: 'Admin override of the conversation sub-state (recorded as an event)',
          requestBody: requestBody(transitionBodySchema),
          responses: { '200': envelope('Transitioned', transitionResultSchema), ...COMMON_ERRORS, ...NOT_FOUND },
        },
      },
      '/conversation/participants/{id}/messages': {
        parameters: [ID_PARAMETER],
        post: {
          tags: participantTag,
          summary: 'Send an organiser message to the participant (recorded in the transcript)',
          requestBody: requestBody(organiserMessageBodySchema),
          responses: {
            '202': envelope('Queued for delivery', organiserMessageResultSchema),
            ...COMMON_ERRORS,
            ...NOT_FOUND,
          },
        },
      },
      '/channels/webhook/messages': {
        post: {
          tags: ['channels'],
          summary: 'Inbound participant message for the webhook channel',
          security: [{}, { webhookSignature: [], webhookTimestamp: [] }],
          requestBody: requestBody(webhookInboundBodySchema),
          responses: {
            '202': {
              description:
                'Durably recorded; processed afterwards. A repeated id (or, signed without one, the same signed ' +
                'request) is acknowledged and ignored. A sender who is not enrolled gets the same answer: only ' +
                'logged, not processed (unless AUTO_ENROLL_NEW_USERS=true).',
              content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ok' } } } } },
            },
            '400': errorResponse(
              'Invalid payload or phone number, or a timestamp outside PROMPTPIPE_WEBHOOK_TOLERANCE of the server clock',
            ),
            '401': errorResponse(
              'Missing or wrong X-PromptPipe-Signature, a signature that covers no time, or an ' +
                'X-PromptPipe-Timestamp outside PROMPTPIPE_WEBHOOK_TOLERANCE (when PROMPTPIPE_WEBHOOK_SECRET is set)',
            ),
          },
        },
      },
      '/admin/clock': {
        get: {
          tags: ['admin'],
          summary: 'The current (study) time and the clock mode',
          responses: { '200': envelope('Clock', z.object({ now: z.string(), mode: z.enum(['system', 'manual']) })) },
        },
        post: {
          tags: ['admin'],
          summary: 'PROMPTPIPE_CLOCK=manual only: move time forward and run everything that became due',
          requestBody: requestBody(clockBodySchema),
          responses: {
            '200': envelope('Everything due has finished', clockResultSchema),
            ...COMMON_ERRORS,
            '409': errorResponse('The clock is not manual'),
          },
        },
      },
      '/health': {
        get: {
          tags: ['operations'],
          summary: 'Liveness and database reachability (no token needed)',
          security: [{}],
          responses: {
            '200': {
              description: 'Healthy',
              content: { 'application/json': { schema: jsonSchema(healthSchema, 'output') } },
            },
            '503': {
              description: 'Database unreachable',
              content: { 'application/json': { schema: jsonSchema(healthSchema, 'output') } },
            },
          },
        },
      },
      '/metrics': {
        get: {
          tags: ['operations'],
          summary: 'Prometheus metrics',
          responses: {
            '200': { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } },
          },
        },
      },
      '/openapi.json': {
        get: {
          tags: ['operations'],
          summary: 'This document',
          responses: { '200': { description: 'OpenAPI 3.1 document', content: { 'application/json': {} } } },
        },
      },
      ...researchOpenApiPaths(),
      ...studyOpenApiPaths(),
      ...originalApiOpenApiPaths(),
    },
  };
}
