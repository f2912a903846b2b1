/**
 * The audit trail of what staff do: one row per request that changes anything (whatever its outcome: refused,
 * failed or done), per bulk read of identifiable data (routes marked `auditRead`: exports, the participant list), and
 * per refused read; sign-ins are recorded by the sign-in route itself (`recordAudit`), which knows the e-mail typed.
 *
 * Written in `onSend`, before the response leaves: whoever sees the answer can find its row. A failed write of the
 * trail is logged and does not fail the request it describes (the action already happened).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Log } from '../domain/log.ts';
import type { AuditEntry, AuditOutcome, AuditRepository } from '../store/staff-store.ts';

const READ_ONLY_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface AuditTrail {
  record(
    request: FastifyRequest,
    entry: Pick<AuditEntry, 'action' | 'outcome'> &
      Partial<Pick<AuditEntry, 'actor' | 'participantId' | 'detail' | 'status'>>,
  ): Promise<void>;
}

export function createAuditTrail(options: { audit: AuditRepository; now: () => Date; log: Log }): AuditTrail {
  return {
    async record(request, entry) {
      const actor = request.staffActor;
      try {
        await options.audit.append({
          at: options.now(),
          actor: entry.actor ?? actor?.label ?? 'anonymous',
          actorUserId: actor?.userId,
          actorTokenId: actor?.tokenId,
          action: entry.action,
          participantId: entry.participantId,
          address: request.ip,
          outcome: entry.outcome,
          status: entry.status,
          detail: entry.detail,
        });
      } catch (error) {
        options.log.error({ err: error, action: entry.action }, 'could not write the audit trail');
      }
    },
  };
}

export function outcomeOf(status: number): AuditOutcome {
  if (status === 401 || status === 403 || status === 429) return 'denied';
  return status < 400 ? 'success' : 'failure';
}

function shouldAudit(request: FastifyRequest, reply: FastifyReply): boolean {
  const config = request.routeOptions.config;
  if (!config || config.public || request.routeOptions.url === undefined) return false;
  if (!READ_ONLY_METHODS.has(request.method)) return true;
  return config.auditRead === true || reply.statusCode === 403;
}

/** The participant a route acts on: the `:id` of the participant routes (API and dashboard). */
function participantOf(request: FastifyRequest): string | undefined {
  const url = request.routeOptions.url ?? '';
  if (!url.includes('/participants/:id')) return undefined;
  const id = (request.params as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
}

/** Which user or token an account route acted on (route params only: never a body, which may hold a password). */
function otherParams(request: FastifyRequest): string | undefined {
  const params = request.params as Record<string, unknown> | undefined;
  if (!params || participantOf(request) !== undefined || Object.keys(params).length === 0) return undefined;
  return JSON.stringify(params);
}

/** What a route adds to its audit row (the reason a staff member gave); never a secret. */
const auditDetails = new WeakMap<FastifyRequest, string>();

export function setAuditDetail(request: FastifyRequest, detail: string): void {
  auditDetails.set(request, detail);
}

export function registerAuditTrail(app: FastifyInstance, trail: AuditTrail): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (!shouldAudit(request, reply)) return payload;
    await trail.record(request, {
      action: `${request.method} ${request.routeOptions.url}`,
      outcome: outcomeOf(reply.statusCode),
      status: reply.statusCode,
      participantId: participantOf(request),
      detail: auditDetails.get(request) ?? otherParams(request),
    });
    return payload;
  });
}
