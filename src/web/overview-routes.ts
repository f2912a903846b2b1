/** `GET /dashboard/overview`: the study's charts over the last 14 days. */
import type { FastifyInstance } from 'fastify';
import { PARTICIPANT_STATUSES } from '../domain/participant.ts';
import type { RosterReadRepositories } from '../store/ports/roster-reads.ts';
import { SUB_STATES } from './dashboard-pages.ts';
import type { DashboardRouteKit } from './dashboard-route-kit.ts';
import { createOverviewData, OVERVIEW_DAYS } from './overview-data.ts';
import { type Bar, barChart, overviewPage } from './overview-page.ts';

const percent = (part: number, whole: number) => (whole === 0 ? '' : ` (${Math.round((part / whole) * 100)} %)`);

export function registerOverviewRoutes(
  app: FastifyInstance,
  options: { store: RosterReadRepositories },
  kit: DashboardRouteKit,
): void {
  const overviewData = createOverviewData(options.store);
  app.get('/dashboard/overview', kit.publicRoute, async (request, reply) => {
    const page = kit.context(request, reply);
    if (!page) return reply;
    const { counts, studyDays, usage } = await overviewData(page.clock.now);
    const byStatus = PARTICIPANT_STATUSES.map((status) => ({ label: status, value: counts.byStatus[status] ?? 0 }));
    const subStates = [
      ...SUB_STATES,
      ...Object.keys(counts.bySubState).filter((key) => !SUB_STATES.includes(key as never)),
    ];
    const bySubState = subStates.map((state) => ({ label: state, value: counts.bySubState[state] ?? 0 }));
    const perLocalDay = (
      figure: (day: (typeof studyDays)[number]) => Bar['value'],
      detail?: (day: (typeof studyDays)[number]) => string,
    ) =>
      studyDays.map((day) => ({
        label: day.localDate,
        value: figure(day),
        ...(detail ? { detail: detail(day) } : {}),
      }));
    const perUtcDay = (figure: (day: (typeof usage)[number]) => number) =>
      usage.map((day) => ({ label: day.date, value: figure(day) }));
    return kit.sendPage(
      reply,
      overviewPage(page, [
        {
          heading: 'Participants',
          note: 'Everyone enrolled now.',
          charts: [barChart('Participants by status', byStatus), barChart('Participants by sub-state', bySubState)],
        },
        {
          heading: `Daily prompts, last ${OVERVIEW_DAYS} days`,
          note: "By the participant's local date: a prompt and its answers count on the day it was sent where the participant lives. Answered: the participant wrote back before the next prompt.",
          charts: [
            barChart(
              'Prompts sent per local day',
              perLocalDay((day) => day.promptsSent),
            ),
            barChart(
              'Prompts answered per local day',
              perLocalDay(
                (day) => day.promptsAnswered,
                (day) =>
                  `${day.promptsAnswered} of ${day.promptsSent} answered${percent(day.promptsAnswered, day.promptsSent)}`,
              ),
            ),
            barChart(
              'Done per local day',
              perLocalDay(
                (day) => day.done,
                (day) => `${day.done} of ${day.promptsSent} Done${percent(day.done, day.promptsSent)}`,
              ),
            ),
            barChart(
              'Median reply time per local day (minutes)',
              perLocalDay((day) => (day.medianReplySeconds === null ? 0 : Math.round(day.medianReplySeconds / 60))),
              { unit: 'minutes' },
            ),
          ],
        },
        {
          heading: `Model and deliveries, last ${OVERVIEW_DAYS} days`,
          note: 'By UTC date.',
          charts: [
            barChart(
              'LLM calls per day (UTC)',
              perUtcDay((day) => day.llmCalls),
            ),
            barChart(
              'LLM tokens per day (UTC)',
              perUtcDay((day) => day.llmTokens),
            ),
            barChart(
              'LLM errors per day (UTC)',
              perUtcDay((day) => day.llmErrors),
            ),
            barChart(
              'Failed deliveries per day (UTC)',
              perUtcDay((day) => day.failedDeliveries),
            ),
          ],
        },
      ]),
    );
  });
}
