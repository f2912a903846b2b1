/**
 * Staff administration on the dashboard: users (admins: invite, change role, deactivate, create the first admin),
 * personal API tokens (everyone: their own; admins: all) and the audit trail (admins). A secret — an invitation link,
 * a new token — is answered as a page of its own, once, never in a redirect URL (which browsers keep in history).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errorMessage } from '../domain/errors.ts';
import type { StaffService } from '../staff/staff-service.ts';
import { AUDIT_PAGE_ROWS, type AuditQuery, auditFilterOf, auditPage } from './audit-page.ts';
import type { DashboardAction, DashboardOptions } from './dashboard-options.ts';
import { layout } from './dashboard-pages.ts';
import type { DashboardRouteKit } from './dashboard-route-kit.ts';
import { html } from './html.ts';
import { secretPage, tokensPage, usersPage } from './staff-pages.ts';

type Form = Record<string, string>;

export function registerStaffAdminRoutes(
  app: FastifyInstance,
  options: DashboardOptions & { accounts: StaffService },
  kit: DashboardRouteKit,
  action: DashboardAction,
): void {
  const { accounts, access } = options;
  const staff = options.store.staff;

  /** A state change answered with a page (a secret shown once; csrf.ts has checked its token): `render`. */
  function showOnce(render: (form: Form, request: FastifyRequest, reply: FastifyReply) => Promise<string>) {
    return async (request: FastifyRequest, reply: FastifyReply) => {
      const form = (request.body ?? {}) as Form;
      try {
        return kit.sendPage(reply, await render(form, request, reply));
      } catch (error) {
        const page = kit.context(request, reply);
        if (!page) return reply;
        const status = error instanceof AppError && error.code === 'not_found' ? 404 : 400;
        const body = html`<p class="error" role="alert">${errorMessage(error)}</p><p><a href="/dashboard" data-back>Back</a></p>`;
        return kit.sendPage(reply, layout('Could not do that', page, body), status);
      }
    };
  }

  const firstAdminOpen = async (request: FastifyRequest): Promise<boolean> =>
    request.staffActor?.label === 'PROMPTPIPE_API_TOKEN' && (await staff.countActiveAdmins()) === 0;

  app.get('/dashboard/users', kit.needs('admin'), async (request, reply) => {
    const page = kit.context(request, reply);
    if (!page) return reply;
    const users = await staff.listUsers();
    return kit.sendPage(reply, usersPage(page, users, { firstAdmin: await firstAdminOpen(request) }));
  });

  app.post(
    '/dashboard/users/invite',
    kit.needs('admin'),
    showOnce(async (form, request, reply) => {
      const { user, secret } = await accounts.invite({
        email: form.email ?? '',
        displayName: form.display_name ?? '',
        role: form.role ?? '',
      });
      const origin = `${request.protocol}://${request.headers.host ?? 'localhost'}`;
      const context = kit.context(request, reply);
      if (!context) throw new AppError('unauthorized', 'sign in again');
      return secretPage(
        context,
        'Invitation link',
        `Send this link to ${user.email} (${user.role}); it lets them choose a password within 7 days.`,
        `${origin}/dashboard/invite/${secret}`,
      );
    }),
  );

  app.post(
    '/dashboard/users/first-admin',
    kit.needs('admin'),
    showOnce(async (form, request, reply) => {
      if (!(await firstAdminOpen(request))) {
        throw new AppError('conflict', 'an admin exists already: ask them for an invitation');
      }
      const user = await accounts.createWithPassword({
        email: form.email ?? '',
        displayName: form.display_name ?? '',
        role: 'admin',
        password: form.password ?? '',
      });
      // The API-token session ends; the new admin's own begins.
      await access.signOut(request, reply);
      request.staffActor = await access.openSession(request, reply, user, true);
      const context = kit.context(request, reply);
      if (!context) throw new AppError('unauthorized', 'sign in again');
      return layout(
        'First admin created',
        context,
        html`<p role="status">You are signed in as ${user.email}. Invite the rest of the team from <a href="/dashboard/users">Users</a>.</p>`,
      );
    }),
  );

  app.post(
    '/dashboard/users/:id/role',
    kit.needs('admin'),
    action(async (form, request) => {
      const { id } = request.params as { id: string };
      await accounts.changeRole(id, form.role ?? '', form.identify === 'true');
      return '/dashboard/users';
    }),
  );

  app.post(
    '/dashboard/users/:id/deactivate',
    kit.needs('admin'),
    action(async (_form, request) => {
      await accounts.deactivate((request.params as { id: string }).id);
      return '/dashboard/users';
    }),
  );

  app.get('/dashboard/tokens', kit.needs('read'), async (request, reply) => {
    const page = kit.context(request, reply);
    if (!page) return reply;
    const actor = request.staffActor;
    const admin = actor?.permissions.has('admin') ?? false;
    const tokens = admin ? await staff.listTokens() : actor?.userId ? await staff.listTokens(actor.userId) : [];
    const owners = new Map((await staff.listUsers()).map((user) => [user.id, user.email]));
    return kit.sendPage(reply, tokensPage(page, tokens, { canCreate: actor?.userId !== undefined, owners }));
  });

  app.post(
    '/dashboard/tokens',
    kit.needs('read'),
    showOnce(async (form, request, reply) => {
      const userId = request.staffActor?.userId;
      if (!userId)
        throw new AppError('invalid_input', 'tokens belong to staff accounts: sign in with your own account');
      const expires = form.expires ? new Date(`${form.expires}T23:59:59Z`) : undefined;
      if (expires && Number.isNaN(expires.getTime())) throw new AppError('invalid_input', 'the expiry is not a date');
      const { record, token } = await accounts.createToken({
        userId,
        name: form.name ?? '',
        scope: form.scope ?? '',
        expiresAt: expires,
      });
      const context = kit.context(request, reply);
      if (!context) throw new AppError('unauthorized', 'sign in again');
      return secretPage(
        context,
        'New API token',
        `Token "${record.name}" (${record.scope}): send it as Authorization: Bearer <token>.`,
        token,
      );
    }),
  );

  app.post(
    '/dashboard/tokens/:id/revoke',
    kit.needs('read'),
    action(async (_form, request) => {
      const actor = request.staffActor;
      await accounts.revokeToken((request.params as { id: string }).id, {
        userId: actor?.userId,
        asAdmin: actor?.permissions.has('admin') ?? false,
      });
      return '/dashboard/tokens';
    }),
  );

  app.get('/dashboard/audit', kit.needs('admin'), async (request, reply) => {
    const page = kit.context(request, reply);
    if (!page) return reply;
    const query = (request.query ?? {}) as AuditQuery;
    const entries = await options.store.audit.list(auditFilterOf(query), AUDIT_PAGE_ROWS);
    return kit.sendPage(reply, auditPage(page, query, entries));
  });
}
