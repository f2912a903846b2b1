/**
 * Resolves credentials to an `Actor`, and keeps dashboard sessions in the database (so they survive a restart, every
 * instance sees a sign-out at once, and "sign out everywhere" is one delete):
 *
 * - `Authorization: Bearer <PROMPTPIPE_API_TOKEN>`: admin, as before staff accounts existed.
 * - `Authorization: Bearer pp_<id>_<secret>`: a personal token; refused once revoked, expired, or its owner
 *   deactivated. Its permissions are its scope's, bounded by its owner's role (permissions.ts).
 * - The `promptpipe_session` cookie (dashboard routes, and the reads marked `dashboardSession`): the browser holds a
 *   random id; the database holds its SHA-256 and the session's CSRF secret (page-security.ts checks the tokens made
 *   from it). A session unused for `idleTimeoutMs` is gone. Time is the wall clock (`now`), not the study clock.
 *   `@fastify/cookie` (registered by the API server) parses and writes the cookie.
 *
 * The server is protected when `PROMPTPIPE_API_TOKEN` is set or any staff account exists; otherwise everyone is an
 * admin ("open"), and a dashboard session exists only to carry a CSRF token.
 */
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ALL_PERMISSIONS, effectivePermissions, rolePermissions } from '../domain/permissions.ts';
import type { StaffRepository, StaffSessionRecord, StaffUser } from '../store/staff-store.ts';
import type { Actor } from './actor.ts';
import { digest, newSecret, parseApiToken, sameDigest } from './secrets.ts';

export const SESSION_COOKIE = 'promptpipe_session';
/** A token's last use is written at most this often: one API call need not be one write. */
const TOUCH_INTERVAL_MS = 60_000;

export interface StaffAccessOptions {
  /** Without it (a server built for a test with a partial store) only the API token and an open server exist. */
  staff: StaffRepository | undefined;
  apiToken: string | undefined;
  idleTimeoutMs: number;
  /** An https public URL makes the cookie `Secure` even when a proxy speaks plain HTTP to us. */
  publicUrl?: string | undefined;
  /** Wall-clock milliseconds (default `Date.now`). */
  now?: () => number;
}

export const API_TOKEN_ACTOR: Actor = {
  label: 'PROMPTPIPE_API_TOKEN',
  userId: undefined,
  tokenId: undefined,
  role: 'admin',
  permissions: ALL_PERMISSIONS,
  session: undefined,
};

export type StaffAccess = ReturnType<typeof createStaffAccess>;

export function createStaffAccess(options: StaffAccessOptions) {
  const { staff, apiToken } = options;
  const now = (): Date => new Date((options.now ?? Date.now)());
  const secureCookie = options.publicUrl?.startsWith('https://') ?? false;
  // Accounts are deactivated, never deleted: once one exists the server stays protected, so "true" can be kept.
  let accountsExist = false;

  async function isProtected(): Promise<boolean> {
    if (apiToken) return true;
    if (accountsExist || !staff) return accountsExist;
    accountsExist = await staff.anyUser();
    return accountsExist;
  }

  function userActor(user: StaffUser, session?: StaffSessionRecord): Actor {
    return {
      label: user.email,
      userId: user.id,
      tokenId: undefined,
      role: user.role,
      permissions: rolePermissions(user.role, user.canIdentify),
      session: session && { idHash: session.idHash, csrfSecret: session.csrfToken },
    };
  }

  /**
   * The cookie's attributes, the same when it is set and when it is cleared (or a browser keeps the Secure one).
   * `request.protocol` follows X-Forwarded-Proto only when Fastify's trustProxy is on (it is not by default).
   */
  function cookieOptions(request: FastifyRequest): CookieSerializeOptions {
    return { path: '/', httpOnly: true, sameSite: 'strict', secure: request.protocol === 'https' || secureCookie };
  }

  function activeUser(user: StaffUser | undefined): user is StaffUser {
    return user !== undefined && user.deactivatedAt === undefined;
  }

  return {
    isProtected,
    /** The wall clock of sessions, lockouts, invitations and token expiry (never the study clock). */
    now,
    /** Whether `PROMPTPIPE_API_TOKEN` is set (the sign-in form then offers it). */
    apiTokenConfigured: apiToken !== undefined,
    /** Whether a bearer value is the configured API token (digests compared, so neither length nor content leaks). */
    isApiToken(presented: string): boolean {
      return apiToken !== undefined && sameDigest(digest(apiToken), digest(presented));
    },

    /** The actor a bearer value names, or undefined when it names none (wrong, revoked, expired, deactivated). */
    async fromBearer(presented: string): Promise<Actor | undefined> {
      if (this.isApiToken(presented)) return API_TOKEN_ACTOR;
      const parsed = parseApiToken(presented);
      if (!parsed || !staff) return undefined;
      const token = await staff.getToken(parsed.id);
      if (!token || !sameDigest(token.secretHash, digest(parsed.secret))) return undefined;
      const at = now();
      if (token.revokedAt || (token.expiresAt && token.expiresAt <= at)) return undefined;
      const owner = await staff.getUser(token.userId);
      if (!activeUser(owner)) return undefined;
      if (!token.lastUsedAt || at.getTime() - token.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
        await staff.touchToken(token.id, at);
      }
      return {
        label: `token:${token.id} ${owner.email}`,
        userId: owner.id,
        tokenId: token.id,
        role: owner.role,
        permissions: effectivePermissions(rolePermissions(owner.role, owner.canIdentify), token.scope),
        session: undefined,
      };
    },

    /** The request's session actor; undefined without a valid one. Counts as use (idle expiry starts again). */
    async fromSession(request: FastifyRequest, signedInOnly = true): Promise<Actor | undefined> {
      const id = request.cookies[SESSION_COOKIE];
      if (!id || !staff) return undefined;
      const session = await staff.getSession(digest(id));
      if (!session) return undefined;
      const at = now();
      if (at.getTime() - session.lastUsedAt.getTime() >= options.idleTimeoutMs) {
        await staff.deleteSession(session.idHash);
        return undefined;
      }
      // Every use, exactly: idle expiry is a promise to the staff, and one small write per page view is cheap.
      if (at > session.lastUsedAt) await staff.touchSession(session.idHash, at);
      const withSession = { idHash: session.idHash, csrfSecret: session.csrfToken };
      if (session.userId) {
        const user = await staff.getUser(session.userId);
        return activeUser(user) ? userActor(user, session) : undefined;
      }
      if (session.signedIn && apiToken) return { ...API_TOKEN_ACTOR, session: withSession };
      if (!signedInOnly && !(await isProtected())) return { ...openActor(), session: withSession };
      return undefined;
    },

    /** Whether a session is still valid, without counting as use (an open live stream asks this). */
    async sessionStillValid(idHash: string): Promise<boolean> {
      const session = await staff?.getSession(idHash);
      if (!session) return false;
      if (now().getTime() - session.lastUsedAt.getTime() >= options.idleTimeoutMs) return false;
      if (!session.userId) return session.signedIn || !(await isProtected());
      return activeUser(await staff?.getUser(session.userId));
    },

    /** Opens a session and sets its cookie; `user` undefined for the API-token sign-in or an open dashboard. */
    async openSession(
      request: FastifyRequest,
      reply: FastifyReply,
      user: StaffUser | undefined,
      signedIn: boolean,
    ): Promise<Actor> {
      if (!staff) throw new Error('dashboard sessions need the staff store');
      const id = newSecret();
      const at = now();
      const session: StaffSessionRecord = {
        idHash: digest(id),
        userId: user?.id,
        signedIn,
        // The session's CSRF secret (the store's column keeps its older name): pages carry tokens made from it.
        csrfToken: newSecret(),
        createdAt: at,
        lastUsedAt: at,
      };
      // Expired sessions are dropped as new ones open: the table holds only live ones (and the rows are tiny).
      await staff.deleteSessionsUnusedSince(new Date(at.getTime() - options.idleTimeoutMs));
      await staff.createSession(session);
      reply.setCookie(SESSION_COOKIE, id, cookieOptions(request));
      const withSession = { idHash: session.idHash, csrfSecret: session.csrfToken };
      if (user) return userActor(user, session);
      return { ...(signedIn ? API_TOKEN_ACTOR : openActor()), session: withSession };
    },

    /** Ends the request's session and clears its cookie; returns the ended session's id digest. */
    async signOut(request: FastifyRequest, reply: FastifyReply): Promise<string | undefined> {
      const id = request.cookies[SESSION_COOKIE];
      reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
      if (!id || !staff) return undefined;
      await staff.deleteSession(digest(id));
      return digest(id);
    },
  };
}

const OPEN_LABEL = 'open server (no PROMPTPIPE_API_TOKEN)';

/** Anyone at all, on a server without an API token or staff accounts. */
export function isOpenActor(actor: Actor): boolean {
  return actor.label === OPEN_LABEL;
}

export function openActor(): Actor {
  return {
    label: OPEN_LABEL,
    userId: undefined,
    tokenId: undefined,
    role: 'admin',
    permissions: ALL_PERMISSIONS,
    session: undefined,
  };
}
