/**
 * `POST /conversation/participants/import`: a `text/csv` body or a JSON array of participants; `?partial=true`
 * enrolls the valid rows even when others are invalid, `?dry_run=true` only validates. Invalid rows without
 * `partial` answer 400 with every row error in `result.errors` and enroll nobody.
 */
import type { FastifyInstance } from 'fastify';
import { readCsvImport, readJsonImport } from '../../research/import/import-input.ts';
import { type ImportService, importOutcomeJson, importSummary } from '../../research/import/import-service.ts';
import { importQuerySchema, isTrue } from '../../research/research-schemas.ts';
import { ok } from '../envelope.ts';
import { parseInput } from '../validation.ts';

export const IMPORT_PATH = '/conversation/participants/import';

export function registerImportRoutes(app: FastifyInstance, options: { imports: ImportService }): void {
  // CSV bodies arrive as bytes, so non-UTF-8 files are recognised rather than silently mangled.
  app.addContentTypeParser(['text/csv', 'application/csv'], { parseAs: 'buffer' }, (_request, body, done) => {
    done(null, body);
  });

  app.post(IMPORT_PATH, async (request, reply) => {
    const query = parseInput(importQuerySchema, request.query, 'query');
    const rows = Buffer.isBuffer(request.body) ? readCsvImport(request.body) : readJsonImport(request.body);
    const outcome = await options.imports.run(rows, { partial: isTrue(query.partial), dryRun: isTrue(query.dry_run) });
    const summary = importSummary(outcome);
    const result = importOutcomeJson(outcome);
    if (outcome.errors.length > 0 && !outcome.partial) {
      const details = outcome.errors.map((error) => `row ${error.row} ${error.field}: ${error.problem}`).join('; ');
      return reply.code(400).send({ status: 'error', message: `${summary}. ${details}`, result });
    }
    return ok(result, summary);
  });
}
