/**
 * Who did it, for alert acknowledgements, takeovers and staff replies: the audit trail's name of the credential the
 * access hook resolved (`request.staffActor`: a staff member's e-mail, a personal token, `PROMPTPIPE_API_TOKEN`).
 */
import type { FastifyRequest } from 'fastify';

export function staffActor(request: FastifyRequest, fallback = 'api-token'): string {
  return request.staffActor?.label || fallback;
}
