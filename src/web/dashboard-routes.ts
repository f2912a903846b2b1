/**
 * `/dashboard`: the study staff's pages and actions. Each route names the permission it needs; the access hook
 * (src/api/auth.ts) resolves the signed-in staff member from the session cookie and refuses the rest, before any
 * handler runs. Every POST verifies the CSRF token and the Origin (csrf.ts). Sign-in, accounts, tokens and the audit trail are
 * in staff-routes.ts and its siblings.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errorMessage } from '../domain/errors.ts';
import { readCsvImport } from '../research/import/import-input.ts';
import { importSummary } from '../research/import/import-service.ts';
import { isManualClock } from '../scheduling/clock.ts';
import { isOpenActor } from '../staff/staff-access.ts';
import { registerAdherenceRoutes } from './adherence-routes.ts';
import { registerAlertInboxRoutes } from './alert-inbox-routes.ts';
import { registerAssetRoutes } from './asset-routes.ts';
import { registerCsrfProtection } from './csrf.ts';
import type { DashboardOptions } from './dashboard-options.ts';
import { enrollPage, layout, type PageContext } from './dashboard-pages.ts';
import { type DashboardRouteKit, routeNeeding } from './dashboard-route-kit.ts';
import { registerEvalRatingRoutes } from './eval-rating-routes.ts';
import { registerExportPageRoutes } from './export-page-routes.ts';
import { html } from './html.ts';
import { registerOverviewRoutes } from './overview-routes.ts';
import { addPageSecurityHeaders } from './page-security.ts';
import { registerParticipantActionRoutes } from './participant-action-routes.ts';
import { registerParticipantPageRoutes } from './participant-routes.ts';
import { registerRatingRoutes } from './rating-routes.ts';
import { registerRosterRoutes } from './roster-routes.ts';
import { registerSafetyPageRoutes } from './safety-page-routes.ts';
import { registerStaffRoutes } from './staff-routes.ts';
import { registerStudyPageRoutes } from './study-page-routes.ts';
import { dashboardEntry } from './transcript-view.ts';
import { FALLBACK_TIME_ZONE, participantTimeZone } from './zoned-time.ts';

export type { DashboardOptions };

type Form = Record<string, string>;

function parseForm(body: string): Form {
  return Object.fromEntries(new URLSearchParams(body));
}

export function createDashboardRoutes(options: DashboardOptions): FastifyPluginAsync {
  const { store, participants, clock, runner } = options;
  const { access } = options;
  let advancing: Promise<unknown> = Promise.resolve();

  return async (app) => {
    const live = options.live(app);
    addPageSecurityHeaders(app, 'same-origin');
    await registerCsrfProtection(app);
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
      done(null, parseForm(String(body))),
    );
    const readRoute = routeNeeding('read');
    const writeRoute = routeNeeding('write');

    /** The page context, or undefined after redirecting to the sign-in form. */
    function context(request: FastifyRequest, reply: FastifyReply, flash?: string): PageContext | undefined {
      // The access hook has resolved the actor (and opened an open dashboard's session) before any handler.
      const actor = request.staffActor;
      const session = actor?.session;
      if (!actor || !session) {
        void reply.redirect('/dashboard/login', 303);
        return undefined;
      }
      return {
        csrfToken: reply.generateCsrf(),
        signedIn: !isOpenActor(actor),
        staff: { label: actor.label, permissions: actor.permissions },
        clock: { now: clock.now(), manual: isManualClock(clock) },
        channels: options.channelNames,
        ...(flash ? { flash } : {}),
      };
    }

    function sendPage(reply: FastifyReply, page: string, status = 200): FastifyReply {
      return reply
        .code(status)
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(page);
    }

    /** Runs a state-changing action (csrf.ts has checked its token): redirect (POST/redirect/GET) or an error page. */
    function action(handler: (form: Form, request: FastifyRequest) => Promise<string>) {
      return async (request: FastifyRequest, reply: FastifyReply) => {
        const form = (request.body ?? {}) as Form;
        try {
          return reply.redirect(await handler(form, request), 303);
        } catch (error) {
          const status = error instanceof AppError && error.code === 'not_found' ? 404 : 400;
          const page = context(request, reply);
          if (!page) return reply;
          return sendPage(
            reply,
            layout(
              'Could not do that',
              page,
              html`<p class="error" role="alert">${errorMessage(error)}</p><p><a href="/dashboard" data-back>Back</a></p>`,
            ),
            status,
          );
        }
      };
    }

    const kit: DashboardRouteKit = {
      needs: routeNeeding,
      publicRoute: { config: { permission: 'read', auditRead: true } },
      context,
      sendPage,
    };

    registerAssetRoutes(app);

    registerStaffRoutes(app, options, kit, action, live);

    registerRosterRoutes(app, options, kit);

    registerParticipantPageRoutes(app, options, kit);

    app.get('/dashboard/participants/:id/live', readRoute, async (request, reply) => {
      const session = request.staffActor?.session;
      const { id } = request.params as { id: string };
      const after = Number((request.query as { after?: string }).after ?? 0) || 0;
      // The page's zone, once per stream: the entries it appends must read like the ones already shown.
      const timeZone = await participants.state(id).then(
        async (state) => participantTimeZone(await participants.get(id), state.schedules),
        // Deleted meanwhile: the stream has nothing more to show, in whatever zone.
        (error: unknown) => {
          if (error instanceof AppError && error.code === 'not_found') return FALLBACK_TIME_ZONE;
          throw error;
        },
      );
      // An open dashboard has no sign-out; its streams end with the server.
      const sessionId = session?.idHash ?? '';
      live.stream(reply, {
        key: sessionId,
        stillAllowed: () => access.sessionStillValid(sessionId),
        afterId: after,
        list: async (afterId) =>
          (await store.transcript.list(id, { limit: 200 })).filter((entry) => entry.id > afterId),
        render: (entry) => dashboardEntry(entry, timeZone).value,
      });
    });

    registerParticipantActionRoutes(app, options, kit, action);

    app.get('/dashboard/enroll', writeRoute, async (request, reply) => {
      const page = context(request, reply);
      if (!page) return reply;
      return sendPage(reply, enrollPage(page));
    });
    app.post(
      '/dashboard/enroll',
      writeRoute,
      action(async (form) => {
        const participant = await participants.enroll(
          {
            phoneNumber: form.phone_number ?? '',
            ...(form.name ? { name: form.name } : {}),
            ...(form.timezone ? { timezone: form.timezone } : {}),
            ...(form.background ? { background: form.background } : {}),
            ...(form.language ? { language: form.language } : {}),
            ...(form.channel ? { channel: form.channel } : {}),
          },
          { source: 'dashboard' },
        );
        return `/dashboard/participants/${participant.id}?done=Enrolled`;
      }),
    );
    app.post(
      '/dashboard/enroll/csv',
      writeRoute,
      action(async (form) => {
        const text = form.csv ?? '';
        if (!text.trim()) throw new AppError('invalid_input', 'choose a CSV file or paste its text first');
        const rows = readCsvImport(new TextEncoder().encode(text), { extraColumns: options.imports.extraColumns });
        const outcome = await options.imports.run(rows, { partial: form.partial === 'true' });
        const problems = outcome.errors
          .slice(0, 10)
          .map((error) => `row ${error.row} ${error.field}: ${error.problem}`)
          .join('; ');
        const more = outcome.errors.length > 10 ? ` (and ${outcome.errors.length - 10} more)` : '';
        const summary = `${importSummary(outcome)}${problems ? `. ${problems}${more}` : ''}`;
        // Nothing enrolled because rows are invalid: an error page, so nothing looks done.
        if (!outcome.applied && outcome.errors.length > 0) throw new AppError('invalid_input', summary);
        return `/dashboard?flash=${encodeURIComponent(summary)}`;
      }),
    );

    registerOverviewRoutes(app, options, kit);
    registerAdherenceRoutes(app, options, kit);
    if (options.trials) registerStudyPageRoutes(app, { trials: options.trials }, kit, action);
    registerExportPageRoutes(app, options, kit);
    registerRatingRoutes(app, options, kit, action);
    registerEvalRatingRoutes(app, options, kit, action);
    registerAlertInboxRoutes(app, { store, alerts: options.alerts }, kit, action);
    registerSafetyPageRoutes(
      app,
      { store, participants, takeovers: options.takeovers, pauses: options.pauses },
      kit,
      action,
    );

    app.post(
      '/dashboard/clock',
      writeRoute,
      action(async (form, request) => {
        if (!isManualClock(clock) || !runner)
          throw new AppError('conflict', 'the clock is not manual (PROMPTPIPE_CLOCK=manual)');
        const work = advancing.then(async () => {
          const now = clock.now();
          const target =
            form.advance === 'hour'
              ? new Date(now.getTime() + 3_600_000)
              : form.advance === 'day'
                ? new Date(now.getTime() + 86_400_000)
                : new Date(`${form.to ?? ''}Z`);
          if (Number.isNaN(target.getTime()))
            throw new AppError('invalid_input', 'choose a date and time to advance to');
          if (target < now) throw new AppError('invalid_input', 'the clock only moves forward');
          return runner.advanceTo(target);
        });
        advancing = work.catch(() => undefined);
        await work;
        const back = request.headers.referer;
        return back && new URL(back).host === request.headers.host
          ? new URL(back).pathname + new URL(back).search
          : '/dashboard';
      }),
    );
  };
}
