/**
 * Who did it, for alert acknowledgements, takeovers and staff replies: the signed-in staff member when the staff
 * accounts' auth hook has set `request.user`, else the credential the request came with.
 */
import type { FastifyRequest } from 'fastify';

export function staffActor(request: FastifyRequest, fallback: 'api-token' | 'dashboard' = 'api-token'): string {
  const user = (request as FastifyRequest & { user?: { username?: unknown; name?: unknown; id?: unknown } }).user;
  for (const candidate of [user?.username, user?.name, user?.id]) {
    if (typeof candidate === 'string' && candidate !== '') return candidate;
  }
  return fallback;
}
