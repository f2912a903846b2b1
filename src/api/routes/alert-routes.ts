/**
 * Staff alerts: `GET /alerts` (newest first, `?status=open|acknowledged|resolved`, `?participant_id=`),
 * `GET /alerts/:id`, and acknowledging (`POST /alerts/:id/acknowledge`, an optional note) and resolving
 * (`POST /alerts/:id/resolve`, a note required) with who did it. Resolving a participant's last unresolved alert ends
 * their staff review, and runs the coach's turn held for it unless `held_turn` is `discard`.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../domain/errors.ts';
import { ok } from '../../http/envelope.ts';
import { envelope, errorResponse } from '../../http/envelope-schemas.ts';
import type { AlertService } from '../../safety/alert-service.ts';
import type { Alert, AlertDelivery } from '../../store/safety-records.ts';
import type { Store } from '../../store/store.ts';
import { COMMON_ERRORS } from '../openapi.ts';
import { permission } from '../route-permission.ts';
import { staffActor } from '../staff-actor.ts';

const listQuerySchema = z.object({
  status: z.enum(['open', 'acknowledged', 'resolved']).optional(),
  participant_id: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
});
const idParamsSchema = z.object({ id: z.string().min(1) });
const acknowledgeSchema = z.object({ note: z.string().trim().max(2000).optional() }).strict();
const resolveSchema = z
  .object({
    note: z.string().trim().min(1, 'a note is required').max(2000),
    /** A coach turn held for the review (`SAFETY_COACH_TURN=hold`): `run` (default) or `discard`. */
    held_turn: z.enum(['run', 'discard']).optional(),
  })
  .strict();

const tags = ['safety'];
const alertSchema = z.looseObject({ id: z.string(), status: z.enum(['open', 'acknowledged', 'resolved']) });
const unknownAlert = { 404: errorResponse('Unknown alert') };

export function alertView(alert: Alert, deliveries: readonly AlertDelivery[]) {
  const time = (date: Date | undefined) => date?.toISOString() ?? null;
  return {
    id: alert.id,
    participant_id: alert.participantId ?? null,
    kind: alert.kind,
    detector: alert.detector,
    rule: alert.rule ?? null,
    score: alert.score ?? null,
    urgency: alert.urgency,
    reason: alert.reason,
    source_message_id: alert.sourceMessageId ?? null,
    status: alert.status,
    created_at: alert.createdAt.toISOString(),
    acknowledged_at: time(alert.acknowledgedAt),
    acknowledged_by: alert.acknowledgedBy ?? null,
    acknowledge_note: alert.acknowledgeNote ?? null,
    resolved_at: time(alert.resolvedAt),
    resolved_by: alert.resolvedBy ?? null,
    resolve_note: alert.resolveNote ?? null,
    deliveries: deliveries.map((delivery) => ({
      route: delivery.route,
      status: delivery.status,
      attempts: delivery.attempts,
      last_error: delivery.lastError ?? null,
      delivered_at: time(delivery.deliveredAt),
    })),
  };
}

export function createAlertApiRoutes(options: {
  store: Pick<Store, 'alerts'>;
  alerts: AlertService;
}): FastifyPluginAsync {
  const { store } = options;
  const view = async (alert: Alert) => alertView(alert, await store.alerts.deliveries(alert.id));
  return async (scope: FastifyInstance) => {
    const app = scope.withTypeProvider<ZodTypeProvider>();
    const list = {
      operationId: 'listAlerts',
      tags,
      summary: 'Safety alerts, newest first, with the number still open',
      querystring: listQuerySchema,
      response: {
        200: envelope('The alerts', z.object({ open: z.number().int(), alerts: z.array(alertSchema) })),
        ...COMMON_ERRORS,
      },
    };
    app.get('/alerts', { ...permission('read'), schema: list }, async (request) => {
      const query = request.query;
      const alerts = await store.alerts.list({
        ...(query.status ? { status: query.status } : {}),
        ...(query.participant_id ? { participantId: query.participant_id } : {}),
        ...(query.limit ? { limit: query.limit } : {}),
      });
      return ok({ open: await store.alerts.countOpen(), alerts: await Promise.all(alerts.map(view)) });
    });

    const one = {
      operationId: 'getAlert',
      tags,
      summary: 'One alert with its deliveries to staff',
      params: idParamsSchema,
      response: { 200: envelope('The alert', alertSchema), ...COMMON_ERRORS, ...unknownAlert },
    };
    app.get('/alerts/:id', { ...permission('read'), schema: one }, async (request) => {
      const { id } = request.params;
      const alert = await store.alerts.get(id);
      if (!alert) throw new AppError('not_found', `no alert with id ${id}`);
      return ok(await view(alert));
    });

    const acknowledge = {
      operationId: 'acknowledgeAlert',
      tags,
      summary: 'Acknowledge an open alert, with an optional note',
      params: idParamsSchema,
      body: acknowledgeSchema,
      response: { 200: envelope('Acknowledged', alertSchema), ...COMMON_ERRORS, ...unknownAlert },
    };
    app.post('/alerts/:id/acknowledge', { ...permission('alerts'), schema: acknowledge }, async (request) => {
      const { id } = request.params;
      const body = request.body;
      const alert = await options.alerts.acknowledge(id, staffActor(request), body.note || undefined);
      return ok(await view(alert));
    });

    const resolve = {
      operationId: 'resolveAlert',
      tags,
      summary: 'Resolve an alert, with a note saying how',
      params: idParamsSchema,
      body: resolveSchema,
      response: { 200: envelope('Resolved', alertSchema), ...COMMON_ERRORS, ...unknownAlert },
    };
    app.post('/alerts/:id/resolve', { ...permission('alerts'), schema: resolve }, async (request) => {
      const { id } = request.params;
      const body = request.body;
      const alert = await options.alerts.resolve(
        id,
        staffActor(request),
        body.note,
        body.held_turn ? { heldTurn: body.held_turn } : undefined,
      );
      return ok(await view(alert));
    });
  };
}
