/**
 * `GET /dashboard/study`: the allocation report and the pause of randomisation, with `POST /dashboard/study/
 * randomisation/pause|resume` (a reason required; audited); `GET /dashboard/participants/<id>/decisions`.
 */
import type { FastifyInstance } from 'fastify';
import { setAuditDetail } from '../staff/audit-trail.ts';
import type { TrialService } from '../trials/trial-service.ts';
import type { DashboardRouteKit } from './dashboard-route-kit.ts';
import type { DashboardAction } from './participant-action-routes.ts';
import { decisionsPage, studyPage } from './study-page.ts';

export function registerStudyPageRoutes(
  app: FastifyInstance,
  options: { trials: TrialService },
  kit: DashboardRouteKit,
  action: DashboardAction,
): void {
  app.get('/dashboard/study', kit.needs('admin'), async (request, reply) => {
    const page = kit.context(request, reply, (request.query as { done?: string }).done);
    if (!page) return reply;
    const study = options.trials.study;
    const summary = study
      ? { id: study.design.study.id, hash: study.hash, method: study.design.allocation.method }
      : undefined;
    const randomisation = await options.trials.randomisation();
    return kit.sendPage(reply, studyPage(page, summary, await options.trials.report(), randomisation));
  });

  for (const change of ['pause', 'resume'] as const) {
    app.post(
      `/dashboard/study/randomisation/${change}`,
      kit.needs('admin'),
      action(async (form, request) => {
        const reason = form.reason ?? '';
        setAuditDetail(request, JSON.stringify({ reason: reason.trim() }));
        await options.trials.changeRandomisation({
          paused: change === 'pause',
          reason,
          by: request.staffActor?.label ?? 'dashboard',
        });
        return `/dashboard/study?done=Randomisation+${change === 'pause' ? 'paused' : 'resumed'}`;
      }),
    );
  }

  app.get('/dashboard/participants/:id/decisions', kit.needs('read'), async (request, reply) => {
    const page = kit.context(request, reply);
    if (!page) return reply;
    const { id } = request.params as { id: string };
    return kit.sendPage(reply, decisionsPage(page, id, await options.trials.decisions(id)));
  });
}
