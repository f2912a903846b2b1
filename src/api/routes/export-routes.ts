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
import type { Store } from '../../store/store.ts';
import { parseInput } from '../validation.ts';

export interface ExportRouteOptions {
  store: Store;
  pseudonymKey: string | undefined;
  defaultChannel: string;
}

const CONTENT_TYPES = { csv: 'text/csv; charset=utf-8', jsonl: 'application/x-ndjson; charset=utf-8' } as const;

export function registerExportRoutes(app: FastifyInstance, options: ExportRouteOptions): void {
  // The dashboard's export page links here: a signed-in session may download as well as the API token (auth.ts).
  app.get('/export/:file', { config: { dashboardSession: true } }, async (request, reply) => {
    const { file } = parseInput(exportParamsSchema, request.params, 'path');
    const query = parseInput(exportQuerySchema, request.query, 'query');
    const [name, extension] = file.split('.') as [ExportTableName, string];
    const format = parseFormat(extension);
    const participants = query.participant === undefined ? [] : [query.participant].flat();
    const filter = exportFilter({ participants, since: query.since });
    const pseudonymizer = isTrue(query.pseudonymize)
      ? createPseudonymizer(options.pseudonymKey, { requestedBy: 'pseudonymize=true' })
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
  });
}
