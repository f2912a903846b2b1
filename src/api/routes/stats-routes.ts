/**
 * `GET /stats?from=&to=`: participants by status and sub-state; prompts sent, answered (median latency), Done rate;
 * reminders; LLM calls, tokens and errors; failed deliveries — over the range and per UTC day. `from` and `to` are
 * dates (YYYY-MM-DD, `to` inclusive) or ISO 8601 instants (`to` exclusive).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AppError } from '../../domain/errors.ts';
import { ok } from '../../http/envelope.ts';
import { envelope } from '../../http/envelope-schemas.ts';
import { parseSince } from '../../research/export/export-filter.ts';
import { statsQuerySchema } from '../../research/research-schemas.ts';
import { computeStudyStats } from '../../research/stats/study-stats.ts';
import type { Store } from '../../store/store.ts';
import { COMMON_ERRORS } from '../openapi.ts';
import { originalResponseStats } from './original/record-routes.ts';
import { statsResultSchema } from './research-result-schemas.ts';

const DAY_MS = 86_400_000;

function parseBound(value: string | undefined, name: string, endOfDay: boolean): Date | undefined {
  let date: Date | undefined;
  try {
    date = parseSince(value);
  } catch {
    throw new AppError('invalid_input', `${name} "${value}" is not a date (YYYY-MM-DD) or an ISO 8601 time`);
  }
  if (date && endOfDay && /^\d{4}-\d{2}-\d{2}$/.test(value?.trim() ?? '')) return new Date(date.getTime() + DAY_MS);
  return date;
}

export function registerStatsRoutes(app: FastifyInstance, options: { store: Store }): void {
  const schema = {
    operationId: 'getStudyStats',
    tags: ['research'],
    summary: 'Study statistics over the range and per UTC day',
    querystring: statsQuerySchema,
    response: { 200: envelope('Statistics', statsResultSchema), ...COMMON_ERRORS },
  };
  const config = { dashboardSession: true, permission: 'export' } as const;
  app.withTypeProvider<ZodTypeProvider>().get('/stats', { config, schema }, async (request) => {
    const query = request.query;
    const from = parseBound(query.from, 'from', false);
    const to = parseBound(query.to, 'to', true);
    if (from && to && to <= from) throw new AppError('invalid_input', 'to must be after from');
    const stats = await computeStudyStats(options.store, { from, to });
    // The original PromptPipe's figures beside ours, so its scripts and dashboards keep reading them.
    return ok({ ...stats, ...(await originalResponseStats(options.store, { from, to })) });
  });
}
