/**
 * `GET /export/<table>.csv` and `.jsonl`: the same tables and columns as `promptpipe export`, streamed (never built in
 * memory). Filters as query parameters: `participant` (repeatable or comma-separated), `since`, `pseudonymize`.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { failure } from '../../http/envelope.ts';
import { errorResponse } from '../../http/envelope-schemas.ts';
import { exportFilter, parseFormat } from '../../research/export/export-filter.ts';
import { exportTable } from '../../research/export/export-tables.ts';
import type { ExportTableName } from '../../research/export/export-types.ts';
import { createPseudonymizer } from '../../research/export/pseudonymizer.ts';
import { tableStream } from '../../research/export/table-stream.ts';
import { exportParamsSchema, exportQuerySchema, isTrue } from '../../research/research-schemas.ts';
import { can } from '../../staff/actor.ts';
import type { Store } from '../../store/store.ts';
import { COMMON_ERRORS } from '../openapi.ts';

export interface ExportRouteOptions {
  store: Store;
  pseudonymKey: string | undefined;
  defaultChannel: string;
}

const CONTENT_TYPES = { csv: 'text/csv; charset=utf-8', jsonl: 'application/x-ndjson; charset=utf-8' } as const;

export function registerExportRoutes(app: FastifyInstance, options: ExportRouteOptions): void {
  // The dashboard's export page links here: a signed-in session may download as well as the API token (auth.ts).
  const schema = {
    operationId: 'exportTable',
    tags: ['research'],
    summary: 'Export one table, streamed (same columns as `promptpipe export`; see codebook.md)',
    params: exportParamsSchema,
    querystring: exportQuerySchema,
    response: {
      200: {
        description: 'CSV with a header row, or JSON Lines',
        content: { 'text/csv': { schema: z.string() }, 'application/x-ndjson': { schema: z.string() } },
      },
      ...COMMON_ERRORS,
      403: errorResponse('The audit table is for admins'),
    },
  };
  app
    .withTypeProvider<ZodTypeProvider>()
    .get(
      '/export/:file',
      { config: { dashboardSession: true, permission: 'export', auditRead: true }, schema },
      async (request, reply) => {
        const { file } = request.params;
        const query = request.query;
        const [name, extension] = file.split('.') as [ExportTableName, string];
        // The audit trail names staff and their addresses: the admins' to read, like its dashboard page.
        if (name === 'audit' && !can(request.staffActor, 'admin')) {
          return reply.code(403).send(failure('the audit table is for admins'));
        }
        const format = parseFormat(extension);
        const participants = query.participant === undefined ? [] : [query.participant].flat();
        const filter = exportFilter({ participants, since: query.since });
        // Staff who may not see identifiable data get pseudonymised files only, whatever they asked for.
        const identifiable = can(request.staffActor, 'identify');
        const pseudonymizer =
          isTrue(query.pseudonymize) || !identifiable
            ? createPseudonymizer(options.pseudonymKey, {
                requestedBy: identifiable ? 'pseudonymize=true' : 'a role without identifiable access',
              })
            : undefined;
        const stream = tableStream(
          exportTable(name),
          {
            store: options.store,
            filter,
            pseudonymizer,
            defaultChannel: options.defaultChannel,
          },
          format,
        );
        return (
          reply
            .type(CONTENT_TYPES[format])
            .header('content-disposition', `attachment; filename="${file}"`)
            // The declared text, streamed (the schema types the whole body as a string).
            .send(stream as unknown as string)
        );
      },
    );
}
