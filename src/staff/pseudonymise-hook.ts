/**
 * Applies `pseudonymiseResponse` to every answer for staff without `identify`: JSON bodies before serialisation, and
 * HTML pages (the dashboard) as text, their phone numbers masked. Names on dashboard pages are left out by the page
 * renderers, which know where they put them (participant-label.ts).
 */
import type { FastifyInstance } from 'fastify';
import { can } from './actor.ts';
import { maskPhonesIn, pseudonymiseResponse } from './pseudonymise.ts';

export function registerPseudonymisation(app: FastifyInstance): void {
  app.addHook('preSerialization', async (request, _reply, payload) => {
    if (!request.staffActor || can(request.staffActor, 'identify')) return payload;
    return pseudonymiseResponse(payload);
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.staffActor || can(request.staffActor, 'identify') || typeof payload !== 'string') return payload;
    const type = String(reply.getHeader('content-type') ?? '');
    return type.startsWith('text/html') ? maskPhonesIn(payload) : payload;
  });
}
