/** `GET /dashboard/study`: the allocation report; `GET /dashboard/participants/<id>/decisions` (study-page.ts). */
import type { FastifyInstance } from 'fastify';
import type { TrialService } from '../trials/trial-service.ts';
import type { DashboardRouteKit } from './dashboard-route-kit.ts';
import { decisionsPage, studyPage } from './study-page.ts';

export function registerStudyPageRoutes(
  app: FastifyInstance,
  options: { trials: TrialService },
  kit: DashboardRouteKit,
): void {
  app.get('/dashboard/study', kit.needs('admin'), async (request, reply) => {
    const page = kit.context(request, reply);
    if (!page) return reply;
    const study = options.trials.study;
    const summary = study
      ? { id: study.design.study.id, hash: study.hash, method: study.design.allocation.method }
      : undefined;
    return kit.sendPage(reply, studyPage(page, summary, await options.trials.report()));
  });

  app.get('/dashboard/participants/:id/decisions', kit.needs('read'), async (request, reply) => {
    const page = kit.context(request, reply);
    if (!page) return reply;
    const { id } = request.params as { id: string };
    return kit.sendPage(reply, decisionsPage(page, id, await options.trials.decisions(id)));
  });
}
