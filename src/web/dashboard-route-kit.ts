/** What dashboard-routes.ts hands to the route files it registers: the session check and the page sender. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PageContext } from './dashboard-pages.ts';

export interface DashboardRouteKit {
  /** Route options that exempt a dashboard route from the API's bearer token (the dashboard session checks instead). */
  publicRoute: { config: { public: true } };
  /** The page context, or undefined after redirecting to the sign-in form. */
  context(request: FastifyRequest, reply: FastifyReply, flash?: string): PageContext | undefined;
  sendPage(reply: FastifyReply, page: string, status?: number): FastifyReply;
}
