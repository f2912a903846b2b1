/**
 * Signing in and out of the dashboard: e-mail and password (with the account lockout of staff-service.ts), or the
 * API token (the first admin's way in, and what set-ups before staff accounts used); invitation links; sign-out and
 * sign-out everywhere. Every attempt, refused or not, is one audit row. Wrong passwords and tokens count against the
 * same per-address throttle as wrong bearer tokens.
 */
import type { FastifyInstance } from 'fastify';
import { errorMessage } from '../domain/errors.ts';
import { createStaffService } from '../staff/staff-service.ts';
import type { DashboardAction, DashboardOptions } from './dashboard-options.ts';
import type { DashboardRouteKit } from './dashboard-route-kit.ts';
import type { LiveTranscripts } from './live-transcript.ts';
import { registerStaffAdminRoutes } from './staff-admin-routes.ts';
import { invitationPage, signInPage } from './staff-pages.ts';

type Form = Record<string, string>;

export type { DashboardAction };

export function registerStaffRoutes(
  app: FastifyInstance,
  options: DashboardOptions,
  kit: DashboardRouteKit,
  action: DashboardAction,
  live: LiveTranscripts,
): void {
  const { access, auditTrail, authThrottle } = options;
  const accounts = createStaffService({ staff: options.store.staff, now: access.now });
  const publicRoute = { config: { public: true as const } };
  const apiTokenSignIn = access.apiTokenConfigured;

  app.get('/dashboard/login', publicRoute, async (_request, reply) => {
    if (!(await access.isProtected())) return reply.redirect('/dashboard', 303);
    return kit.sendPage(reply, signInPage({ apiTokenSignIn }));
  });

  app.post('/dashboard/login', publicRoute, async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    if (!(await access.isProtected())) return reply.redirect('/dashboard', 303);
    const email = (form.email ?? '').trim();
    const byToken = !email && Boolean(form.token);
    const signInAudit = (outcome: 'success' | 'denied', detail: string) =>
      auditTrail.record(request, {
        action: 'sign-in',
        outcome,
        actor: byToken ? 'PROMPTPIPE_API_TOKEN' : email || '(no e-mail)',
        detail,
      });
    const retryAfter = authThrottle.retryAfterSeconds(request.ip);
    if (retryAfter > 0) {
      await signInAudit('denied', 'too many failures from this address');
      reply.header('retry-after', String(retryAfter));
      const error = `Too many wrong tokens or passwords: try again in ${retryAfter} s.`;
      return kit.sendPage(reply, signInPage({ error, apiTokenSignIn }), 429);
    }
    if (byToken) {
      if (access.isApiToken(form.token ?? '')) {
        request.staffActor = await access.openSession(request, reply, undefined, true);
        await signInAudit('success', 'with the API token');
        return reply.redirect('/dashboard', 303);
      }
      authThrottle.recordFailure(request.ip);
      await signInAudit('denied', 'wrong API token');
      const error = 'Wrong token: this form accepts the API token (PROMPTPIPE_API_TOKEN).';
      return kit.sendPage(reply, signInPage({ error, apiTokenSignIn }), 401);
    }
    const result = await accounts.signIn(email, form.password ?? '');
    if (result.ok) {
      request.staffActor = await access.openSession(request, reply, result.user, true);
      await signInAudit('success', 'with a password');
      return reply.redirect('/dashboard', 303);
    }
    authThrottle.recordFailure(request.ip);
    await signInAudit('denied', result.reason === 'locked' ? 'account locked' : `${result.reason} e-mail or password`);
    const error =
      result.reason === 'locked'
        ? `Too many wrong passwords: this account is locked until ${result.lockedUntil?.toISOString().slice(11, 16)} UTC.`
        : 'Wrong e-mail or password.';
    return kit.sendPage(reply, signInPage({ error, apiTokenSignIn }), result.reason === 'locked' ? 423 : 401);
  });

  app.post(
    '/dashboard/logout',
    publicRoute,
    action(async (_form, request) => {
      await auditTrail.record(request, { action: 'sign-out', outcome: 'success' });
      return '/dashboard/login';
    }),
  );
  app.post(
    '/dashboard/logout-everywhere',
    kit.needs('read'),
    action(async (_form, request) => {
      const userId = request.staffActor?.userId;
      if (userId) await options.store.staff.deleteSessionsOfUser(userId);
      return '/dashboard/login';
    }),
  );
  // The cookie is cleared and the live streams closed only once the action has passed its CSRF check.
  app.addHook('onSend', async (request, reply, payload) => {
    const url = request.routeOptions.url;
    if ((url === '/dashboard/logout' || url === '/dashboard/logout-everywhere') && reply.statusCode === 303) {
      const ended = await access.signOut(request, reply);
      if (ended !== undefined) live.end(ended);
    }
    return payload;
  });

  app.get('/dashboard/invite/:secret', publicRoute, async (request, reply) => {
    const user = await accounts.invitation((request.params as { secret: string }).secret);
    if (!user)
      return kit.sendPage(
        reply,
        signInPage({ error: 'This invitation link is not valid any more.', apiTokenSignIn }),
        404,
      );
    return kit.sendPage(reply, invitationPage(user));
  });
  app.post('/dashboard/invite/:secret', publicRoute, async (request, reply) => {
    const { secret } = request.params as { secret: string };
    const form = (request.body ?? {}) as Form;
    const invited = await accounts.invitation(secret);
    try {
      const user = await accounts.acceptInvitation(secret, form.password ?? '');
      request.staffActor = await access.openSession(request, reply, user, true);
      await auditTrail.record(request, { action: 'invitation-accepted', outcome: 'success' });
      return reply.redirect('/dashboard', 303);
    } catch (error) {
      await auditTrail.record(request, {
        action: 'invitation-accepted',
        outcome: 'failure',
        actor: invited?.email ?? 'anonymous',
        detail: errorMessage(error),
      });
      if (!invited) return kit.sendPage(reply, signInPage({ error: errorMessage(error), apiTokenSignIn }), 404);
      return kit.sendPage(reply, invitationPage(invited, errorMessage(error)), 400);
    }
  });

  registerStaffAdminRoutes(app, { ...options, accounts }, kit, action);
}
