/** The OpenAPI paths of the research endpoints (export, bulk import, broadcasts, statistics). */
import { z } from 'zod';
import { originalStatsJsonSchema } from '../api/routes/original/original-openapi.ts';
import { EXPORT_FORMATS, EXPORT_TABLES } from './export/export-types.ts';
import { IMPORT_COLUMNS } from './import/import-input.ts';
import { broadcastBodySchema, exportQuerySchema, importQuerySchema, statsQuerySchema } from './research-schemas.ts';

type JsonObject = Record<string, unknown>;

function jsonSchema(schema: z.ZodType): JsonObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonObject;
  return rest;
}

function queryParameters(schema: z.ZodObject): JsonObject[] {
  const properties = (jsonSchema(schema)['properties'] ?? {}) as Record<string, JsonObject>;
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: false,
    schema: property,
  }));
}

const error = (description: string): JsonObject => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
});

const ok = (description: string, result: JsonObject): JsonObject => ({
  description,
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['status'],
        properties: { status: { type: 'string', enum: ['ok'] }, message: { type: 'string' }, result },
      },
    },
  },
});

const COMMON = {
  '400': error('Invalid input: the message says which field and why'),
  '401': error('Missing or wrong bearer token'),
};

const figures = {
  type: 'object',
  properties: Object.fromEntries(
    [
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
    ].map((name) => [name, { type: ['number', 'null'] }]),
  ),
};

const broadcastProgress = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    text: { type: 'string' },
    filter: { type: 'object' },
    recipients: { type: 'integer' },
    rate_per_minute: { type: 'number' },
    created_at: { type: 'string', format: 'date-time' },
    queued: { type: 'integer' },
    sent: { type: 'integer', description: 'Delivered to the channel' },
    failed: { type: 'integer' },
    skipped: { type: 'integer', description: 'Withdrawn (opted out) or deleted before their slot' },
  },
};

const importResult = {
  type: 'object',
  properties: {
    dry_run: { type: 'boolean' },
    partial: { type: 'boolean' },
    applied: { type: 'boolean' },
    total_rows: { type: 'integer' },
    enrolled: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          row: { type: 'integer', description: '1 = the first row after the header' },
          participant_id: { type: ['string', 'null'], description: 'null in a dry run' },
          phone_number: { type: 'string' },
          chat_url: {
            type: 'string',
            description: 'Web-chat participants: their private chat link (as in Participant)',
          },
        },
      },
    },
    skipped: { type: 'array', items: { type: 'object' }, description: 'Already-enrolled numbers' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        properties: { row: { type: 'integer' }, field: { type: 'string' }, problem: { type: 'string' } },
      },
    },
    greetings: { type: 'object' },
  },
};

export function researchOpenApiPaths(): JsonObject {
  const files = EXPORT_TABLES.flatMap((table) => EXPORT_FORMATS.map((format) => `${table}.${format}`));
  return {
    '/export/{file}': {
      get: {
        tags: ['research'],
        summary: 'Export one table, streamed (same columns as `promptpipe export`; see codebook.md)',
        security: [{ bearerAuth: [] }, { dashboardSession: [] }],
        parameters: [
          { name: 'file', in: 'path', required: true, schema: { type: 'string', enum: files } },
          ...queryParameters(exportQuerySchema),
        ],
        responses: {
          '200': {
            description: 'CSV with a header row, or JSON Lines',
            content: {
              'text/csv': { schema: { type: 'string' } },
              'application/x-ndjson': { schema: { type: 'string' } },
            },
          },
          ...COMMON,
        },
      },
    },
    '/conversation/participants/import': {
      post: {
        tags: ['research'],
        summary: `Bulk enrollment from CSV or a JSON array (columns ${IMPORT_COLUMNS.join(', ')}); greetings paced by ENROLL_GREETING_RATE`,
        parameters: queryParameters(importQuerySchema),
        requestBody: {
          required: true,
          content: {
            'text/csv': { schema: { type: 'string' } },
            'application/json': {
              schema: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: Object.fromEntries(IMPORT_COLUMNS.map((c) => [c, { type: 'string' }])),
                },
              },
            },
          },
        },
        responses: {
          '200': ok('Imported (or validated, with dry_run)', importResult),
          '400': error(
            'Invalid rows (result.errors lists row, field, problem; nothing enrolled) or an unreadable file',
          ),
          '401': error('Missing or wrong bearer token'),
        },
      },
    },
    '/conversation/broadcasts': {
      post: {
        tags: ['research'],
        summary: 'Send a message to every matching participant, paced by BROADCAST_RATE; withdrawn participants never',
        requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(broadcastBodySchema) } } },
        responses: {
          '200': ok('Dry run: the recipients', { type: 'object' }),
          '202': ok('Queued', broadcastProgress),
          ...COMMON,
        },
      },
    },
    '/conversation/broadcasts/{id}': {
      get: {
        tags: ['research'],
        summary: 'Progress of a broadcast',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': ok('Progress', broadcastProgress), ...COMMON, '404': error('Unknown broadcast') },
      },
    },
    '/stats': {
      get: {
        tags: ['research'],
        summary: 'Study statistics over the range and per UTC day',
        security: [{ bearerAuth: [] }, { dashboardSession: [] }],
        parameters: queryParameters(statsQuerySchema),
        responses: {
          '200': ok('Statistics', {
            type: 'object',
            properties: {
              from: { type: ['string', 'null'] },
              to: { type: ['string', 'null'] },
              participants: { type: 'object' },
              totals: figures,
              days: { type: 'array', items: figures },
              // The original PromptPipe's figures (docs/api.md, "The original API").
              ...(originalStatsJsonSchema()['properties'] as Record<string, unknown>),
            },
          }),
          ...COMMON,
        },
      },
    },
  };
}
