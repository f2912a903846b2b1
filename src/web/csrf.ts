/**
 * Cross-site request forgery protection for every state-changing dashboard request, with `@fastify/csrf-protection`:
 *
 * - Each session has a random CSRF secret, kept server-side with the session itself (staff-access.ts). Pages carry a
 *   token made from it (`reply.generateCsrf()`, salted afresh for every page), in a hidden `_csrf` field and a
 *   `<meta name="csrf-token">` for the scripts, which send it as `X-CSRF-Token`.
 * - Every POST under `/dashboard` must present a valid token, except the two forms that open a session (sign-in, an
 *   invitation): they have no session yet, and what they open is the user's own.
 * - When the browser sends an `Origin`, it must be this server's Host: a cross-site form post is refused even if a
 *   token leaked.
 *
 * The plugin's "session" is the dashboard session as the access hook resolved it (`request.staffActor.session`): it
 * reads the secret from `request.session._csrf`, which is exposed here for it. A refused request gets the
 * dashboard's 403 page, not the plugin's JSON error.
 */
import fastifyCsrfProtection from '@fastify/csrf-protection';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { layout } from './dashboard-pages.ts';
import { html } from './html.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The dashboard session seen as `@fastify/csrf-protection` reads it (only the CSRF secret). */
    session: { _csrf?: string | undefined };
  }
}

/** The forms that open a session: nothing to protect yet (and nothing to make a token from). */
const SESSION_OPENING_ROUTES = new Set(['/dashboard/login', '/dashboard/invite/:secret']);

const REFUSED = html`<p role="alert">This request was refused: sign in again and retry from the dashboard (missing or wrong CSRF token, or a cross-site origin).</p><p><a href="/dashboard">Dashboard</a></p>`;

export function sendCsrfRefusal(reply: FastifyReply): FastifyReply {
  return reply
    .code(403)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(layout('Refused', undefined, REFUSED));
}

function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

/** Registers the protection on the dashboard's scope (`app` is the dashboard plugin's instance). */
export async function registerCsrfProtection(app: FastifyInstance): Promise<void> {
  app.decorateRequest('session', {
    getter(this: FastifyRequest) {
      return { _csrf: this.staffActor?.session?.csrfSecret };
    },
  });
  await app.register(fastifyCsrfProtection, { sessionPlugin: '@fastify/session', logLevel: 'debug' });
  app.addHook('preHandler', (request, reply, done) => {
    if (request.method !== 'POST' || SESSION_OPENING_ROUTES.has(request.routeOptions.url ?? '')) return done();
    if (!request.staffActor?.session || !sameOrigin(request)) {
      sendCsrfRefusal(reply);
      return;
    }
    app.csrfProtection(request, reply, done);
  });
  // The plugin refuses by sending its error; every other error goes on to the API's error handler.
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    if (error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET') {
      return sendCsrfRefusal(reply);
    }
    throw error;
  });
}
