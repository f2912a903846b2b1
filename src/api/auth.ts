/**
 * Bearer-token authentication (`PROMPTPIPE_API_TOKEN`). Every route requires `Authorization: Bearer <token>` except
 * those marked `config: { public: true }`: `GET /health` (load balancers) and the channel inbound webhooks (gateways
 * authenticate with their own signature). Without a token everything is open, and the server says so loudly when
 * it listens beyond the loopback interface. Wrong tokens are throttled per client address (auth-throttle.ts).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Log } from '../observability/log.ts';
import type { AuthThrottle } from './auth-throttle.ts';
import { failure } from './envelope.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Reachable without the API token. */
    public?: boolean;
  }
}

/** Compares digests so that neither the content nor the length of the token leaks through timing. */
function tokenMatches(expected: string, presented: string): boolean {
  const digest = (value: string): Buffer => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(expected), digest(presented));
}

export function registerAuth(app: FastifyInstance, token: string | undefined, throttle: AuthThrottle): void {
  if (!token) return;
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config?.public) return;
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
