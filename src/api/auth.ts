/**
 * Access control for every route, API and dashboard alike, in one `onRequest` hook:
 *
 * 1. Each route declares `config: { permission }` or `config: { public: true }` (permissions.ts); a route declaring
 *    neither fails at start-up.
 * 2. The hook resolves who is asking (staff-access.ts): a bearer token — `PROMPTPIPE_API_TOKEN` (admin) or a personal
 *    `pp_…` token — or, on dashboard routes and the reads marked `dashboardSession`, the session cookie. It is
 *    `request.staffActor` for the handlers, the audit hook and the pseudonymisation.
 * 3. No valid credential: 401 (the dashboard's pages redirect to the sign-in form); a credential without the route's
 *    permission: 403.
 *
 * Without `PROMPTPIPE_API_TOKEN` and without any staff account everything is open, and the server says so loudly when
 * it listens beyond the loopback interface. Wrong bearer tokens are throttled per client address (auth-throttle.ts).
 *
 * Only GET and HEAD routes may be marked `dashboardSession`: a cookie rides along with cross-site form posts, so a
 * state-changing API route must demand a bearer token (the dashboard's own actions demand their CSRF token).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Log } from '../domain/log.ts';
import { assertRouteDeclaresAccess, type Permission } from '../domain/permissions.ts';
import { failure } from '../http/envelope.ts';
import { isLoopbackHost } from '../http/loopback.ts';
import type { Actor } from '../staff/actor.ts';
import { openActor, type StaffAccess } from '../staff/staff-access.ts';
import type { AuthThrottle } from './auth-throttle.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Reachable without any credential (health, webhooks with their own signatures, the web-chat link). */
    public?: boolean;
    /** What the caller must be allowed to do (permissions.ts). */
    permission?: Permission;
    /** A GET/HEAD route that also accepts a signed-in dashboard session instead of a bearer token. */
    dashboardSession?: boolean;
    /** A read of identifiable data in bulk (an export, the participant list): audited although it changes nothing. */
    auditRead?: boolean;
  }
}

/** Methods a `dashboardSession` route may have: reads only. */
const SESSION_METHODS = new Set(['GET', 'HEAD']);

export interface AuthOptions {
  access: StaffAccess;
  throttle: AuthThrottle;
}

/** A route and what it declared: the route × role test walks every route of a built app through this. */
export interface DeclaredRoute {
  method: string;
  url: string;
  public: boolean;
  permission: Permission | undefined;
}

const declaredRoutes = new WeakMap<FastifyInstance, DeclaredRoute[]>();

/** Every route registered on `app` since `registerAuth`, one entry per method (HEAD included when Fastify adds it). */
export function routesOf(app: FastifyInstance): readonly DeclaredRoute[] {
  return declaredRoutes.get(app) ?? [];
}

export function registerAuth(app: FastifyInstance, options: AuthOptions): void {
  const { access, throttle } = options;
  const routes: DeclaredRoute[] = [];
  declaredRoutes.set(app, routes);
  app.addHook('onRoute', (route) => {
    assertRouteDeclaresAccess(route);
    for (const method of [route.method].flat()) {
      routes.push({
        method,
        url: route.url,
        public: route.config?.public === true,
        permission: route.config?.permission,
      });
    }
    if (!route.config?.dashboardSession) return;
    const methods = [route.method].flat();
    const writes = methods.filter((method) => !SESSION_METHODS.has(method));
    if (writes.length > 0) {
      throw new Error(`${writes.join(', ')} ${route.url}: only GET and HEAD routes may accept the dashboard session`);
    }
  });
  app.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config;
    const dashboard = isDashboardRoute(request);
    if (config?.public) {
      // The sign-in form and sign-out still want to know the session (its CSRF token), but demand none.
      if (dashboard) request.staffActor = await access.fromSession(request, false);
      return;
    }
    if (!(await access.isProtected())) {
      // An open dashboard still has a session: its forms carry that session's CSRF token.
      request.staffActor = dashboard
        ? ((await access.fromSession(request, false)) ?? (await access.openSession(request, reply, undefined, false)))
        : openActor();
      return;
    }
    const header = request.headers.authorization;
    let actor: Actor | undefined;
    if (header) {
      const retryAfter = throttle.retryAfterSeconds(request.ip);
      if (retryAfter > 0) {
        return reply
          .code(429)
          .header('retry-after', String(retryAfter))
          .send(failure(`too many wrong API tokens from this address: retry in ${retryAfter} s`));
      }
      const match = /^Bearer\s+(.+)$/i.exec(header.trim());
      actor = match?.[1] ? await access.fromBearer(match[1].trim()) : undefined;
      if (!actor) {
        throttle.recordFailure(request.ip);
        return reply.code(401).header('www-authenticate', 'Bearer').send(failure('invalid API token'));
      }
    } else if (dashboard || (config?.dashboardSession && SESSION_METHODS.has(request.method))) {
      actor = await access.fromSession(request);
    }
    if (!actor) return refuseAnonymous(request, reply, dashboard);
    request.staffActor = actor;
    const needed = config?.permission;
    if (needed && !actor.permissions.has(needed)) {
      const message = `${actor.role ?? 'this'} access does not include "${needed}", which ${request.method} ${request.routeOptions.url} needs`;
      if (dashboard) return sendDashboardRefusal(reply, 403, message);
      return reply.code(403).send(failure(message));
    }
  });
}

function isDashboardRoute(request: FastifyRequest): boolean {
  const url = request.routeOptions.url;
  return url === '/dashboard' || (url?.startsWith('/dashboard/') ?? false);
}

function refuseAnonymous(request: FastifyRequest, reply: FastifyReply, dashboard: boolean): FastifyReply {
  if (dashboard) {
    // A page opens the sign-in form; a live stream or an action has no page to show it in.
    if (request.method === 'GET' && !request.routeOptions.url?.endsWith('/live')) {
      return reply.redirect('/dashboard/login', 303);
    }
    return sendDashboardRefusal(reply, request.method === 'GET' ? 401 : 403, 'sign in again and retry');
  }
  return reply
    .code(401)
    .header('www-authenticate', 'Bearer')
    .send(failure('missing Authorization: Bearer <token> header'));
}

function sendDashboardRefusal(reply: FastifyReply, status: number, message: string): FastifyReply {
  const text = message.replace(/[&<>"]/g, (character) => `&#${character.charCodeAt(0)};`);
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Refused</title>` +
        `<link rel="stylesheet" href="/dashboard/assets/dashboard.css"></head><body><main>` +
        `<h1>Refused</h1><p role="alert">This request was refused: ${text}.</p>` +
        `<p><a href="/dashboard">Dashboard</a></p></main></body></html>`,
    );
}

export function warnIfUnprotected(options: { host: string; token: string | undefined; log: Log }): boolean {
  if (options.token || isLoopbackHost(options.host)) return false;
  options.log.warn(
    { host: options.host },
    '!!! PROMPTPIPE_API_TOKEN is not set and the API listens on a non-loopback address: anyone who can reach this ' +
      'port can read transcripts and enroll or delete participants. Set PROMPTPIPE_API_TOKEN, or API_ADDR=127.0.0.1:8080 !!!',
  );
  return true;
}
