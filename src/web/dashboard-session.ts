/**
 * Dashboard sign-in and cross-site request protection.
 *
 * - Sign-in: the API token typed into a form opens a server-side session; the browser holds only a random session id
 *   in an HttpOnly, SameSite=Strict cookie. Sessions live in memory: a restart signs everyone out (the token is still
 *   the credential, so that costs one form).
 * - Without `PROMPTPIPE_API_TOKEN` the dashboard is open, like the API; a session is still created so that forms
 *   carry a CSRF token.
 * - CSRF: every state-changing request must carry the session's token (`_csrf` form field or `x-csrf-token` header)
 *   and, when the browser sends an Origin, an Origin matching the Host. SameSite=Strict already keeps the cookie off
 *   cross-site requests; the token also covers same-site attackers (another app on a sibling subdomain).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'promptpipe_session';

interface Session {
  csrfToken: string;
  signedIn: boolean;
}

export interface DashboardSessions {
  /** True when an API token is configured (sign-in required). */
  readonly protected: boolean;
  /** The request's session, or undefined (no cookie, unknown id, or not signed in while protected). */
  current(request: FastifyRequest): Session | undefined;
  /** An open session for an unprotected dashboard: created on first visit. */
  ensureOpen(request: FastifyRequest, reply: FastifyReply): Session;
  /** Checks the token; on success sets the cookie and returns true. */
  signIn(presentedToken: string, reply: FastifyReply): boolean;
  signOut(request: FastifyRequest, reply: FastifyReply): void;
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

export function createDashboardSessions(options: { apiToken: string | undefined }): DashboardSessions {
  const sessions = new Map<string, Session>();
  const isProtected = Boolean(options.apiToken);

  function open(reply: FastifyReply, signedIn: boolean): Session {
    const id = randomBytes(32).toString('base64url');
    const session = { csrfToken: randomBytes(32).toString('base64url'), signedIn };
    sessions.set(id, session);
    reply.header('set-cookie', `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict`);
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
    ensureOpen(request, reply) {
      return lookup(request) ?? open(reply, false);
    },
    signIn(presentedToken, reply) {
      if (!options.apiToken || !sameSecret(options.apiToken, presentedToken)) return false;
      open(reply, true);
      return true;
    },
    signOut(request, reply) {
      const id = readCookie(request, SESSION_COOKIE);
      if (id !== undefined) sessions.delete(id);
      reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
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
