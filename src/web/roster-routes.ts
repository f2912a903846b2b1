/** `GET /dashboard`: the roster of participants, filtered and paged. */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.ts';
import { PARTICIPANT_STATUSES, type ParticipantStatus } from '../domain/participant.ts';
import {
  ADHERENCE_ALERT_FILTERS,
  type AdherenceAlertFilter,
  type RosterPosition,
  type RosterReadRepositories,
} from '../store/ports/roster-reads.ts';
import type { Store } from '../store/store.ts';
import type { TrialService } from '../trials/trial-service.ts';
import { SUB_STATES } from './dashboard-pages.ts';
import type { DashboardRouteKit } from './dashboard-route-kit.ts';
import { armFilterOf } from './roster-arms.ts';
import { parseRosterKey, participantsPage } from './roster-page.ts';

const PAGE_SIZE = 50;

/** The page the pager's link asks for: `after` / `before` a row's key, or `last`; none: the first page. */
function rosterPosition(query: Record<string, string | undefined>): { position?: RosterPosition } {
  if (query.last === '1') return { position: 'last' };
  for (const direction of ['after', 'before'] as const) {
    const text = query[direction];
    if (text === undefined || text === '') continue;
    const key = parseRosterKey(text);
    if (!key)
      throw new AppError('invalid_input', `${direction} must be a page link's key (<time>,<id>), not "${text}"`);
    return { position: direction === 'after' ? { after: key } : { before: key } };
  }
  return {};
}

/** `adherence_alert`: one of the filters, or none; anything else is refused (a link must not silently widen). */
function adherenceAlertFilter(text: string | undefined): AdherenceAlertFilter | '' {
  if (text === undefined || text === '') return '';
  if (ADHERENCE_ALERT_FILTERS.includes(text as AdherenceAlertFilter)) return text as AdherenceAlertFilter;
  throw new AppError(
    'invalid_input',
    `adherence_alert must be one of ${ADHERENCE_ALERT_FILTERS.join(', ')}, not "${text}"`,
  );
}

export function registerRosterRoutes(
  app: FastifyInstance,
  options: {
    store: RosterReadRepositories & Pick<Store, 'allocations'>;
    channelNames: readonly string[];
    trials?: TrialService;
  },
  kit: DashboardRouteKit,
): void {
  const { store } = options;
  const study = options.trials?.study;
  const arms = study?.design.arms ?? [];
  app.get('/dashboard', kit.publicRoute, async (request, reply) => {
    const page = kit.context(request, reply, (request.query as { flash?: string }).flash);
    if (!page) return reply;
    const query = request.query as Record<string, string | undefined>;
    const roster = {
      search: query.search ?? '',
      status: PARTICIPANT_STATUSES.includes(query.status as ParticipantStatus) ? (query.status as string) : '',
      subState: SUB_STATES.includes(query.sub_state as (typeof SUB_STATES)[number]) ? (query.sub_state as string) : '',
      idle: query.idle === 'yes' || query.idle === 'no' ? query.idle : '',
      channel: options.channelNames.includes(query.channel ?? '') ? (query.channel as string) : '',
      adherenceAlert: adherenceAlertFilter(query.adherence_alert),
      page: Math.max(1, Number.parseInt(query.page ?? '1', 10) || 1),
      arm: armFilterOf(query, arms),
    };
    const keyed = rosterPosition(query);
    // A page asked for by its number alone (typed, or an old bookmark): its rows after skipping the pages before it.
    const position =
      keyed.position || roster.page === 1 ? keyed : { position: { skip: (roster.page - 1) * PAGE_SIZE } };
    const result = await store.roster.page({
      limit: PAGE_SIZE,
      ...position,
      ...(roster.search ? { search: roster.search } : {}),
      ...(roster.status ? { status: roster.status as ParticipantStatus } : {}),
      ...(roster.subState ? { subState: roster.subState } : {}),
      ...(roster.idle ? { idle: roster.idle === 'yes' } : {}),
      ...(roster.adherenceAlert ? { adherenceAlert: roster.adherenceAlert } : {}),
      ...(roster.channel
        ? { channel: { name: roster.channel, isDefault: roster.channel === options.channelNames[0] } }
        : {}),
      ...(roster.arm ? { arm: roster.arm } : {}),
    });
    const trial = study
      ? { arms, armOf: await store.allocations.armsOf(result.rows.map((row) => row.participant.id)) }
      : undefined;
    return kit.sendPage(reply, participantsPage(page, roster, { ...result, pageSize: PAGE_SIZE }, trial));
  });
}
