/** `GET /dashboard/overview`: the study's charts. */
import type { FastifyInstance } from 'fastify';
import { PARTICIPANT_STATUSES } from '../domain/participant.ts';
import { computeStudyStats } from '../research/stats/study-stats.ts';
import type { Store } from '../store/store.ts';
import { SUB_STATES } from './dashboard-pages.ts';
import type { DashboardRouteKit } from './dashboard-route-kit.ts';
import { barChart, overviewPage } from './overview-page.ts';

export function registerOverviewRoutes(app: FastifyInstance, options: { store: Store }, kit: DashboardRouteKit): void {
  const { store } = options;
  app.get('/dashboard/overview', kit.publicRoute, async (request, reply) => {
    const page = kit.context(request, reply);
    if (!page) return reply;
    const bySubState = await Promise.all(
      SUB_STATES.map(async (state) => ({
        label: state,
        value: (await store.roster.page({ subState: state, limit: 0, offset: 0 })).total,
      })),
    );
    const stats = await computeStudyStats(store, { from: undefined, to: undefined });
    const byStatus = PARTICIPANT_STATUSES.map((status) => ({
      label: status,
      value: stats.participants.by_status[status] ?? 0,
    }));
    const days = stats.days.slice(-14);
    const perDay = (figure: (day: (typeof days)[number]) => number | null) =>
      days.map((day) => ({ label: day.date, value: figure(day) ?? 0 }));
    return kit.sendPage(
      reply,
      overviewPage(page, [
        barChart('Participants by status', byStatus),
        barChart('Participants by sub-state', bySubState),
        barChart(
          'Prompts sent per day (UTC)',
          perDay((day) => day.prompts_sent),
        ),
        barChart(
          'Prompts answered per day (UTC)',
          perDay((day) => day.prompts_answered),
        ),
        barChart(
          'Done per day (UTC)',
          perDay((day) => day.done),
        ),
        barChart(
          'Median reply latency per day (minutes)',
          perDay((day) =>
            day.median_reply_latency_seconds === null ? null : Math.round(day.median_reply_latency_seconds / 60),
          ),
        ),
        barChart(
          'LLM calls per day (UTC)',
          perDay((day) => day.llm_calls),
        ),
        barChart(
          'LLM tokens per day (UTC)',
          perDay((day) => day.llm_total_tokens),
        ),
        barChart(
          'LLM errors per day (UTC)',
          perDay((day) => day.llm_errors),
        ),
        barChart(
          'Failed deliveries per day (UTC)',
          perDay((day) => day.failed_deliveries),
        ),
      ]),
    );
  });
}
