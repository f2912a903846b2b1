/**
 * `POST /conversation/participants/import`: a `text/csv` body or a JSON array of participants; `?partial=true`
 * enrolls the valid rows even when others are invalid, `?dry_run=true` only validates. Invalid rows without
 * `partial` answer 400 with every row error in `result.errors` and enroll nobody. A body without a content type (or
 * with a generic one) is read as JSON when it starts with `[` or `{`, else as CSV; any other type is a 415 naming the
 * two accepted ones.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../http/envelope.ts';
import { envelope, errorResponse } from '../../http/envelope-schemas.ts';
import { bodyDocumentedOnly } from '../../http/validation.ts';
import {
  IMPORT_COLUMNS,
  type ImportReadOptions,
  type ImportRow,
  readCsvImport,
  readJsonImport,
  readUntypedImport,
} from '../../research/import/import-input.ts';
import {
  type ImportOutcome,
  type ImportService,
  importOutcomeJson,
  importSummary,
} from '../../research/import/import-service.ts';
import { importQuerySchema, isTrue } from '../../research/research-schemas.ts';
import { COMMON_ERRORS } from '../openapi.ts';
import type { ChatUrlFor } from './participant-routes.ts';
import { importResultSchema } from './research-result-schemas.ts';

export const IMPORT_PATH = '/conversation/participants/import';

const CSV_TYPES = ['text/csv', 'application/csv'];
/** Types that say nothing about the body: what HTTP clients send bytes with when not told otherwise. */
const UNTYPED = ['', 'text/plain', 'application/octet-stream', 'application/x-www-form-urlencoded'];

/** The rows of the body, read as its content type says (JSON bodies arrive parsed, the others as bytes). */
function rowsOf(request: FastifyRequest, reading: ImportReadOptions): ImportRow[] {
  if (!Buffer.isBuffer(request.body)) return readJsonImport(request.body, reading);
  const mediaType = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (CSV_TYPES.includes(mediaType)) return readCsvImport(request.body, reading);
  if (UNTYPED.includes(mediaType)) return readUntypedImport(request.body, reading);
  // A 4xx with a status and no code: the error handler sends its message as it is.
  throw Object.assign(
    new Error(
      `Content-Type ${mediaType.slice(0, 100)} is not supported here; send the participants as text/csv ` +
        '(a header row, then one row per participant) or application/json (an array of objects)',
    ),
    { statusCode: 415 },
  );
}

/** The chat links of the web-chat participants the import enrolled, by participant id. */
async function chatUrlsOf(outcome: ImportOutcome, chatUrlFor: ChatUrlFor | undefined): Promise<Map<string, string>> {
  const urls = new Map<string, string>();
  if (!chatUrlFor) return urls;
  for (const { participantId, channel } of outcome.enrolled) {
    if (participantId === null) continue;
    const url = await chatUrlFor({ id: participantId, channel });
    if (url !== undefined) urls.set(participantId, url);
  }
  return urls;
}

export function registerImportRoutes(
  app: FastifyInstance,
  options: { imports: ImportService; chatUrlFor?: ChatUrlFor | undefined },
): void {
  // Scoped to this route: every other one keeps refusing bodies that are not JSON.
  void app.register(async (scope) => {
    // CSV bodies arrive as bytes, so non-UTF-8 files are recognised rather than silently mangled; so does any other
    // type, or none (`rowsOf` decides), and text/plain instead of Fastify's own string parser.
    scope.removeContentTypeParser('text/plain');
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    const schema = {
      operationId: 'importParticipants',
      tags: ['research'],
      summary: `Bulk enrollment from CSV or a JSON array (columns ${IMPORT_COLUMNS.join(', ')}); greetings paced by ENROLL_GREETING_RATE`,
      querystring: importQuerySchema,
      // Read by `rowsOf` (CSV or JSON, every row checked and reported), not by Fastify's validator.
      body: {
        content: {
          'text/csv': { schema: z.string() },
          'application/json': {
            schema: z.array(
              z.object(Object.fromEntries(IMPORT_COLUMNS.map((column) => [column, z.string().optional()]))),
            ),
          },
        },
      },
      response: {
        200: envelope('Imported (or validated, with dry_run)', importResultSchema),
        400: {
          description: 'Invalid rows (result.errors lists row, field, problem; nothing enrolled) or an unreadable file',
          content: {
            'application/json': {
              schema: z.object({
                status: z.literal('error'),
                message: z.string(),
                result: importResultSchema.optional(),
              }),
            },
          },
        },
        401: COMMON_ERRORS[401],
        415: errorResponse('A content type other than CSV or JSON'),
      },
    };
    const route = { config: { permission: 'write' as const }, schema, validatorCompiler: bodyDocumentedOnly };
    scope.withTypeProvider<ZodTypeProvider>().post(IMPORT_PATH, route, async (request, reply) => {
      const query = request.query;
      const rows = rowsOf(request, { extraColumns: options.imports.extraColumns });
      const outcome = await options.imports.run(rows, {
        partial: isTrue(query.partial),
        dryRun: isTrue(query.dry_run),
      });
      const summary = importSummary(outcome);
      const result = importOutcomeJson(outcome, await chatUrlsOf(outcome, options.chatUrlFor));
      if (outcome.errors.length > 0 && !outcome.partial) {
        const details = outcome.errors.map((error) => `row ${error.row} ${error.field}: ${error.problem}`).join('; ');
        return reply.code(400).send({ status: 'error', message: `${summary}. ${details}`, result });
      }
      return ok(result, summary);
    });
  });
}
