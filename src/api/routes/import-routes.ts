/**
 * `POST /conversation/participants/import`: a `text/csv` body or a JSON array of participants; `?partial=true`
 * enrolls the valid rows even when others are invalid, `?dry_run=true` only validates. Invalid rows without
 * `partial` answer 400 with every row error in `result.errors` and enroll nobody.
 */
import type { FastifyInstance } from 'fastify';
import { readCsvImport, readJsonImport } from '../../research/import/import-input.ts';
import {
  type ImportOutcome,
  type ImportService,
  importOutcomeJson,
  importSummary,
} from '../../research/import/import-service.ts';
import { importQuerySchema, isTrue } from '../../research/research-schemas.ts';
import { ok } from '../envelope.ts';
import { parseInput } from '../validation.ts';
import type { ChatUrlFor } from './participant-routes.ts';

export const IMPORT_PATH = '/conversation/participants/import';

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
  // CSV bodies arrive as bytes, so non-UTF-8 files are recognised rather than silently mangled.
  app.addContentTypeParser(['text/csv', 'application/csv'], { parseAs: 'buffer' }, (_request, body, done) => {
    done(null, body);
  });

  app.post(IMPORT_PATH, async (request, reply) => {
    const query = parseInput(importQuerySchema, request.query, 'query');
    const rows = Buffer.isBuffer(request.body) ? readCsvImport(request.body) : readJsonImport(request.body);
    const outcome = await options.imports.run(rows, { partial: isTrue(query.partial), dryRun: isTrue(query.dry_run) });
    const summary = importSummary(outcome);
    const result = importOutcomeJson(outcome, await chatUrlsOf(outcome, options.chatUrlFor));
    if (outcome.errors.length > 0 && !outcome.partial) {
      const details = outcome.errors.map((error) => `row ${error.row} ${error.field}: ${error.problem}`).join('; ');
      return reply.code(400).send({ status: 'error', message: `${summary}. ${details}`, result });
    }
    return ok(result, summary);
  });
}
