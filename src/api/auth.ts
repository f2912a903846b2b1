/**
 * Bearer-token authentication (`PROMPTPIPE_API_TOKEN`). Every route requires `Authorization: Bearer <token>` except
 * those marked `config: { public: true }`: `GET /health` (load balancers) and the channel inbound webhooks (gateways
 * authenticate with their own signature). Without a token everything is open, and the server says so loudly when
 * it listens beyond the loopback interface. Wrong tokens are throttled per client address (auth-throttle.ts).
 *
 * One exception, for the study team's browser: a GET or HEAD route marked `config: { dashboardSession: true }` (the
 * exports and `/stats`) also accepts a signed-in dashboard session, i.e. its cookie. Only reads may be marked, and
 * marking any other method fails at start-up: a cookie rides along with cross-site form posts, so a state-changing
 * route must keep demanding the token (and the dashboard's own actions demand their CSRF token). A read is safe with
 * the cookie: it is SameSite=Strict, and another site cannot read the response.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Log } from '../observability/log.ts';
import type { AuthThrottle } from './auth-throttle.ts';
import { failure } from './envelope.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Reachable without the API token. */
    public?: boolean;
    /** A GET/HEAD route that also accepts a signed-in dashboard session instead of the API token. */
    dashboardSession?: boolean;
  }
}

/** Methods a `dashboardSession` route may have: reads only. */
const SESSION_METHODS = new Set(['GET', 'HEAD']);

export interface AuthOptions {
  /** `PROMPTPIPE_API_TOKEN`; without it every route is open. */
  token: string | undefined;
  throttle: AuthThrottle;
  /** Whether the request carries a signed-in dashboard session (dashboard-session.ts). */
  dashboardSignedIn?: ((request: FastifyRequest) => boolean) | undefined;
}

/** Compares digests so that neither the content nor the length of the token leaks through timing. */
function tokenMatches(expected: string, presented: string): boolean {
  const digest = (value: string): Buffer => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(expected), digest(presented));
}

export function registerAuth(app: FastifyInstance, options: AuthOptions): void {
  const { token, throttle, dashboardSignedIn } = options;
  app.addHook('onRoute', (route) => {
    if (!route.config?.dashboardSession) return;
    const methods = [route.method].flat();
    const writes = methods.filter((method) => !SESSION_METHODS.has(method));
    if (writes.length > 0) {
      throw new Error(`${writes.join(', ')} ${route.url}: only GET and HEAD routes may accept the dashboard session`);
    }
  });
  if (!token) return;
  app.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config;
    if (config?.public) return;
    // Before the throttle, like the dashboard's own pages: a session is no guess at the token.
    if (config?.dashboardSession && SESSION_METHODS.has(request.method) && dashboardSignedIn?.(request)) return;
    const retryAfter = throttle.retryAfterSeconds(request.ip);
    if (retryAfter > 0) {
      return reply
        .code(429)
        .header('retry-after', String(retryAfter))
        .send(failure(`too many wrong API tokens from this address: retry in ${retryAfter} s`));
    }
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (match?.[1] && tokenMatches(token, match[1].trim())) return;
    // A missing header is no guess (a browser, a misconfigured client): only a presented token counts.
    if (header) throttle.recordFailure(request.ip);
    return reply
      .code(401)
      .header('www-authenticate', 'Bearer')
      .send(failure(header ? 'invalid API token' : 'missing Authorization: Bearer <token> header'));
  });
}

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || bare.startsWith('127.') || bare === '::ffff:127.0.0.1';
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
