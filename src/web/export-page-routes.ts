/** `GET /dashboard/export`: reads the form's choice, checks it, and renders the page (export-page.ts). */
import type { FastifyInstance } from 'fastify';
import { errorMessage } from '../domain/errors.ts';
import { parseSince } from '../research/export/export-filter.ts';
import {
  EXPORT_FORMATS,
  EXPORT_TABLES,
  type ExportFormat,
  type ExportTableName,
} from '../research/export/export-types.ts';
import type { Store } from '../store/store.ts';
import type { DashboardRouteKit } from './dashboard-route-kit.ts';
import { type ExportChoice, exportPage } from './export-page.ts';

type Query = Record<string, string | string[] | undefined>;

const many = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : [value].flat().filter((item) => item !== '');

/** The choice in the query, and what is wrong with it. A first visit (no `show`) gets every table as CSV. */
export function readExportChoice(
  query: Query,
  known: { participantIds: ReadonlySet<string>; pseudonymKeySet: boolean },
): { choice: ExportChoice; show: boolean; error?: string } {
  const show = query.show !== undefined;
  const tables = show
    ? many(query.table).filter((name): name is ExportTableName => (EXPORT_TABLES as readonly string[]).includes(name))
    : // The audit trail is not study data (and is for admins): chosen, never preselected.
      EXPORT_TABLES.filter((name) => name !== 'audit');
  const format = (EXPORT_FORMATS as readonly string[]).includes(String(query.format))
    ? (query.format as ExportFormat)
    : 'csv';
  const choice: ExportChoice = {
    tables,
    format,
    participantIds: many(query.participant),
    since: typeof query.since === 'string' ? query.since.trim() : '',
    pseudonymize: query.pseudonymize === 'true',
  };
  const error = (() => {
    if (!show) return undefined;
    if (tables.length === 0) return 'Choose at least one table.';
    const unknown = choice.participantIds.filter((id) => !known.participantIds.has(id));
    if (unknown.length > 0) return `No participant with id ${unknown.join(', ')} (deleted meanwhile?).`;
    if (choice.pseudonymize && !known.pseudonymKeySet) {
      return 'Pseudonymising needs EXPORT_PSEUDONYM_KEY, which this server does not have.';
    }
    try {
      parseSince(choice.since);
    } catch (failure) {
      return `${errorMessage(failure)}.`;
    }
    return undefined;
  })();
  return { choice, show, ...(error ? { error } : {}) };
}

export function registerExportPageRoutes(
  app: FastifyInstance,
  options: { store: Store; exportPseudonymKeySet: boolean },
  kit: DashboardRouteKit,
): void {
  app.get('/dashboard/export', kit.needs('export'), async (request, reply) => {
    const page = kit.context(request, reply);
    if (!page) return reply;
    const participants = await options.store.participants.list();
    const read = readExportChoice(request.query as Query, {
      participantIds: new Set(participants.map((participant) => participant.id)),
      pseudonymKeySet: options.exportPseudonymKeySet,
    });
    return kit.sendPage(
      reply,
      exportPage(page, { ...read, participants, pseudonymKeySet: options.exportPseudonymKeySet }),
      read.error ? 400 : 200,
    );
  });
}
