/**
 * `GET /export/<table>.csv` and `.jsonl`: the same tables and columns as `promptpipe export`, streamed (never built in
 * memory). Filters as query parameters: `participant` (repeatable or comma-separated), `since`, `pseudonymize`.
 */
import type { FastifyInstance } from 'fastify';
import { exportFilter, parseFormat } from '../../research/export/export-filter.ts';
import { exportTable } from '../../research/export/export-tables.ts';
import type { ExportTableName } from '../../research/export/export-types.ts';
import { createPseudonymizer } from '../../research/export/pseudonymizer.ts';
import { tableStream } from '../../research/export/table-stream.ts';
import { exportParamsSchema, exportQuerySchema, isTrue } from '../../research/research-schemas.ts';
import { can } from '../../staff/actor.ts';
import type { Store } from '../../store/store.ts';
import { failure } from '../envelope.ts';
import { parseInput } from '../validation.ts';

export interface ExportRouteOptions {
  store: Store;
  pseudonymKey: string | undefined;
  defaultChannel: string;
}

const CONTENT_TYPES = { csv: 'text/csv; charset=utf-8', jsonl: 'application/x-ndjson; charset=utf-8' } as const;

export function registerExportRoutes(app: FastifyInstance, options: ExportRouteOptions): void {
  // The dashboard's export page links here: a signed-in session may download as well as the API token (auth.ts).
  app.get(
    '/export/:file',
    { config: { dashboardSession: true, permission: 'export', auditRead: true } },
    async (request, reply) => {
      const { file } = parseInput(exportParamsSchema, request.params, 'path');
      const query = parseInput(exportQuerySchema, request.query, 'query');
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
      return reply
        .type(CONTENT_TYPES[format])
        .header('content-disposition', `attachment; filename="${file}"`)
        .send(stream);
    },
  );
}
