/**
 * Dashboard sign-in and cross-site request protection.
 *
 * - Sign-in: the API token typed into a form opens a server-side session; the browser holds only a random session id
 *   in an HttpOnly, SameSite=Strict cookie, `Secure` when the request came over HTTPS or the server's public URL
 *   (`PROMPTPIPE_PUBLIC_URL`) is https. Sessions live in memory: a restart signs everyone out (the token is still the
 *   credential, so that costs one form).
 * - Idle expiry: a session unused for `idleTimeoutMs` (`DASHBOARD_SESSION_IDLE_TIMEOUT`) is gone, as if signed out.
 *   Every page or action of the session counts as use; an open live transcript does not (it only listens). At most
 *   `MAX_SESSIONS` are kept (the least recently used goes first). Time is the wall clock (`now`), not the study
 *   clock: moving a manual study clock a day forward must not sign the staff out.
 * - Without `PROMPTPIPE_API_TOKEN` the dashboard is open, like the API; a session is still created so that forms
 *   carry a CSRF token.
 * - CSRF: every state-changing request must carry the session's token (`_csrf` form field or `x-csrf-token` header)
 *   and, when the browser sends an Origin, an Origin matching the Host. SameSite=Strict already keeps the cookie off
 *   cross-site requests; the token also covers same-site attackers (another app on a sibling subdomain).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';

export const SESSION_COOKIE = 'promptpipe_session';
/** Enough for every member of a study team on every browser; a bound so that unprotected visits cannot grow it. */
const MAX_SESSIONS = 10_000;

export interface Session {
  /** The cookie's value: what sign-out and the live streams are keyed by. */
  id: string;
  csrfToken: string;
  signedIn: boolean;
}

export interface DashboardSessionOptions {
  apiToken: string | undefined;
  /** `DASHBOARD_SESSION_IDLE_TIMEOUT`. */
  idleTimeoutMs: number;
  /** `PROMPTPIPE_PUBLIC_URL`: an https URL makes the cookie `Secure` even when a proxy speaks plain HTTP to us. */
  publicUrl?: string | undefined;
  /** Wall-clock milliseconds (default `Date.now`). */
  now?: () => number;
}

export interface DashboardSessions {
  /** True when an API token is configured (sign-in required). */
  readonly protected: boolean;
  /**
   * The request's session, or undefined (no cookie, unknown or expired id, or not signed in while protected);
   * counts as use.
   */
  current(request: FastifyRequest): Session | undefined;
  /** Whether the session is still valid, without counting as use (an open live stream asks this). */
  isValid(sessionId: string): boolean;
  /** An open session for an unprotected dashboard: created on first visit. */
  ensureOpen(request: FastifyRequest, reply: FastifyReply): Session;
  /** Checks the token; on success sets the cookie and returns true. */
  signIn(presentedToken: string, request: FastifyRequest, reply: FastifyReply): boolean;
  /** Ends the request's session and clears its cookie; returns the ended session's id. */
  signOut(request: FastifyRequest, reply: FastifyReply): string | undefined;
  /** The CSRF rules above; false means refuse the request. */
  verifyStateChange(request: FastifyRequest, presentedCsrf: string | undefined): boolean;
}

function sameSecret(expected: string, presented: string): boolean {
  const digest = (value: string): Buffer => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(expected), digest(presented));
}

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie ?? '';
  for (const part of header.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return decodeURIComponent(rest.join('='));
  }
  return undefined;
}

export function createDashboardSessions(options: DashboardSessionOptions): DashboardSessions {
  const sessions = new LRUCache<string, Session>({
    max: MAX_SESSIONS,
    ttl: options.idleTimeoutMs,
    // Idle expiry: every use starts the timeout again.
    updateAgeOnGet: true,
    // Exact expiry against `now` (the default caches the time for a millisecond).
    ttlResolution: 0,
    perf: { now: options.now ?? Date.now },
  });
  const isProtected = Boolean(options.apiToken);
  const publicUrlIsHttps = options.publicUrl?.startsWith('https://') ?? false;

  /** `request.protocol` follows X-Forwarded-Proto only when Fastify's trustProxy is on (it is not by default). */
  function cookie(request: FastifyRequest, value: string, extra = ''): string {
    const secure = request.protocol === 'https' || publicUrlIsHttps ? '; Secure' : '';
    return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict${secure}${extra}`;
  }

  function open(request: FastifyRequest, reply: FastifyReply, signedIn: boolean): Session {
    const id = randomBytes(32).toString('base64url');
    const session = { id, csrfToken: randomBytes(32).toString('base64url'), signedIn };
    sessions.set(id, session);
    reply.header('set-cookie', cookie(request, id));
    return session;
  }

  function lookup(request: FastifyRequest): Session | undefined {
    const id = readCookie(request, SESSION_COOKIE);
    return id === undefined ? undefined : sessions.get(id);
  }

  return {
    protected: isProtected,
    current(request) {
      const session = lookup(request);
      if (!session) return undefined;
      return isProtected && !session.signedIn ? undefined : session;
    },
    isValid(sessionId) {
      const session = sessions.peek(sessionId);
      return session !== undefined && (!isProtected || session.signedIn);
    },
    ensureOpen(request, reply) {
      return lookup(request) ?? open(request, reply, false);
    },
    signIn(presentedToken, request, reply) {
      if (!options.apiToken || !sameSecret(options.apiToken, presentedToken)) return false;
      open(request, reply, true);
      return true;
    },
    signOut(request, reply) {
      const id = readCookie(request, SESSION_COOKIE);
      if (id !== undefined) sessions.delete(id);
      reply.header('set-cookie', cookie(request, '', '; Max-Age=0'));
      return id;
    },
    verifyStateChange(request, presentedCsrf) {
      const session = this.current(request);
      if (!session || !presentedCsrf || !sameSecret(session.csrfToken, presentedCsrf)) return false;
      const origin = request.headers.origin;
      if (origin === undefined) return true;
      try {
        return new URL(origin).host === request.headers.host;
      } catch {
        return false;
      }
    },
  };
}
