/**
 * Who is making a request, as the access hook (src/api/access-hook.ts) resolved it: a staff user through a dashboard
 * session or a personal API token, the `PROMPTPIPE_API_TOKEN` (admin), or anyone at all on an unprotected server.
 */
import type { Permission, Role } from '../domain/permissions.ts';

export interface Actor {
  /** How the audit trail names it: an e-mail, `token:<id> <e-mail>`, `PROMPTPIPE_API_TOKEN`, `open dashboard`. */
  readonly label: string;
  readonly userId: string | undefined;
  readonly tokenId: string | undefined;
  readonly role: Role | undefined;
  readonly permissions: ReadonlySet<Permission>;
  /**
   * The dashboard session it came through (sign-out, live streams), with the secret its pages' CSRF tokens are made
   * from (page-security.ts).
   */
  readonly session: { readonly idHash: string; readonly csrfSecret: string } | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the access hook before any handler runs; undefined on public routes without credentials. */
    staffActor?: Actor | undefined;
  }
}

export function can(actor: Actor | undefined, permission: Permission): boolean {
  return actor?.permissions.has(permission) ?? false;
}
