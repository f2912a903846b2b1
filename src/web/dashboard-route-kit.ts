/** What dashboard-routes.ts hands to the route files it registers: route options, the page context and sender. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Permission } from '../domain/permissions.ts';
import type { PageContext } from './dashboard-pages.ts';

export interface DashboardRouteKit {
  /** Route options naming the permission a dashboard route needs (the access hook enforces it, auth.ts). */
  needs(permission: Permission): { config: { permission: Permission } };
  /**
   * The study-wide pages (roster, overview, adherence): `read`, and audited as bulk reads of participant data. (The
   * name is from before staff accounts, when the dashboard checked its session itself; kept for the page files
   * written then.)
   */
  publicRoute: { config: { permission: Permission; auditRead: true } };
  /** The page context, or undefined after redirecting to the sign-in form. */
  context(request: FastifyRequest, reply: FastifyReply, flash?: string): PageContext | undefined;
  sendPage(reply: FastifyReply, page: string, status?: number): FastifyReply;
}

export function routeNeeding(permission: Permission): { config: { permission: Permission } } {
  return { config: { permission } };
}
