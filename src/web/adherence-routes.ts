/** `GET /dashboard/adherence`: the grid a study team reads every morning (adherence-page.ts). */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.ts';
import { PARTICIPANT_STATUSES, type ParticipantStatus } from '../domain/participant.ts';
import type { RosterReadRepositories } from '../store/ports/roster-reads.ts';
import { ADHERENCE_SORTS, type AdherenceSort } from '../store/ports/roster-reads.ts';
import { adherencePage, parseAdherenceKey } from './adherence-page.ts';
import type { DashboardRouteKit } from './dashboard-route-kit.ts';
import { addDays } from './overview-data.ts';

const PAGE_SIZE = 50;
const DAY_CHOICES = [14, 30] as const;

export function registerAdherenceRoutes(
  app: FastifyInstance,
  options: { store: RosterReadRepositories },
  kit: DashboardRouteKit,
): void {
  app.get('/dashboard/adherence', kit.publicRoute, async (request, reply) => {
    const page = kit.context(request, reply);
    if (!page) return reply;
    const query = request.query as Record<string, string | undefined>;
    const sort: AdherenceSort = ADHERENCE_SORTS.includes(query.sort as AdherenceSort)
      ? (query.sort as AdherenceSort)
      : 'adherence';
    const status = PARTICIPANT_STATUSES.includes(query.status as ParticipantStatus) ? (query.status as string) : '';
    const days = DAY_CHOICES.find((choice) => String(choice) === query.days) ?? 14;
    const after = query.after ? parseAdherenceKey(query.after) : undefined;
    if (query.after && (!after || (sort === 'adherence' && !/^\d+$/.test(after.value)))) {
      throw new AppError('invalid_input', `after must be a page link's key (<value>,<id>), not "${query.after}"`);
    }
    // The columns end at today's UTC date: a participant's own date is at most a day either side of it.
    const today = page.clock.now.toISOString().slice(0, 10);
    const dates = Array.from({ length: days }, (_, index) => addDays(today, index - days + 1));
    const result = await options.store.studyDays.adherencePage({
      sort,
      ...(status ? { status: status as ParticipantStatus } : {}),
      fromDate: dates[0] ?? today,
      toDate: today,
      limit: PAGE_SIZE,
      ...(after ? { after } : {}),
    });
    return kit.sendPage(reply, adherencePage(page, { sort, status, days, dates, paged: after !== undefined }, result));
  });
}
