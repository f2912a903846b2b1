import type { Kysely, Selectable } from 'kysely';
import { type Alert, type AlertDelivery, type AlertRepository, AlertStatus } from '../safety-records.ts';
import { fromOptionalTimestamp, fromTimestamp, toTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';
import type { AlertsTable } from './safety-tables.ts';

const DASHBOARD_ROUTE = 'dashboard';

function toAlert(row: Selectable<AlertsTable>): Alert {
  return {
    id: row.id,
    participantId: row.participant_id ?? undefined,
    kind: row.kind,
    detector: row.detector,
    rule: row.rule ?? undefined,
    score: row.score ?? undefined,
    urgency: row.urgency === 'urgent' ? 'urgent' : 'normal',
    reason: row.reason,
    sourceMessageId: row.source_message_id ?? undefined,
    createdAt: fromTimestamp(row.created_at),
    status: row.status as AlertStatus,
    acknowledgedAt: fromOptionalTimestamp(row.acknowledged_at),
    acknowledgedBy: row.acknowledged_by ?? undefined,
    acknowledgeNote: row.acknowledge_note ?? undefined,
    resolvedAt: fromOptionalTimestamp(row.resolved_at),
    resolvedBy: row.resolved_by ?? undefined,
    resolveNote: row.resolve_note ?? undefined,
  };
}

export function createAlertRepository(db: Kysely<Database>): AlertRepository {
  return {
    async create(alert, routes) {
      const createdAt = toTimestamp(alert.createdAt);
      await db
        .insertInto('alerts')
        .values({
          id: alert.id,
          participant_id: alert.participantId ?? null,
          kind: alert.kind,
          detector: alert.detector,
          rule: alert.rule ?? null,
          score: alert.score ?? null,
          urgency: alert.urgency,
          reason: alert.reason,
          source_message_id: alert.sourceMessageId ?? null,
          status: AlertStatus.OPEN,
          created_at: createdAt,
        })
        .execute();
      if (routes.length === 0) return;
      await db
        .insertInto('alert_deliveries')
        .values(
          routes.map((route) => ({
            alert_id: alert.id,
            route,
            // The dashboard reads the alert row itself: delivered by the commit that records it.
            status: route === DASHBOARD_ROUTE ? 'delivered' : 'pending',
            attempts: route === DASHBOARD_ROUTE ? 1 : 0,
            delivered_at: route === DASHBOARD_ROUTE ? createdAt : null,
          })),
        )
        .execute();
    },

    async get(id) {
      const row = await db.selectFrom('alerts').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toAlert(row);
    },

    async list(filter = {}) {
      let query = db.selectFrom('alerts').selectAll();
      if (filter.status) query = query.where('status', '=', filter.status);
      if (filter.participantId) query = query.where('participant_id', '=', filter.participantId);
      const rows = await query
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(filter.limit ?? 100)
        .execute();
      return rows.map(toAlert);
    },

    async countOpen() {
      const row = await db
        .selectFrom('alerts')
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .where('status', '=', AlertStatus.OPEN)
        .executeTakeFirst();
      return Number(row?.count ?? 0);
    },

    async findBySourceMessage(sourceMessageId) {
      const row = await db
        .selectFrom('alerts')
        .selectAll()
        .where('source_message_id', '=', sourceMessageId)
        .executeTakeFirst();
      return row && toAlert(row);
    },

    async findUnresolved(participantId, kind, rule) {
      const row = await db
        .selectFrom('alerts')
        .selectAll()
        .where('participant_id', '=', participantId)
        .where('kind', '=', kind)
        .where('rule', '=', rule)
        .where('status', '!=', AlertStatus.RESOLVED)
        .executeTakeFirst();
      return row && toAlert(row);
    },

    async acknowledge(id, by, note, at) {
      const result = await db
        .updateTable('alerts')
        .set({ status: AlertStatus.ACKNOWLEDGED, acknowledged_at: toTimestamp(at), acknowledged_by: by })
        .set({ acknowledge_note: note ?? null })
        .where('id', '=', id)
        .where('status', '=', AlertStatus.OPEN)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async resolve(id, by, note, at) {
      const result = await db
        .updateTable('alerts')
        .set({ status: AlertStatus.RESOLVED, resolved_at: toTimestamp(at), resolved_by: by, resolve_note: note })
        .where('id', '=', id)
        .where('status', '!=', AlertStatus.RESOLVED)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async deliveries(alertId) {
      const rows = await db
        .selectFrom('alert_deliveries')
        .selectAll()
        .where('alert_id', '=', alertId)
        .orderBy('route')
        .execute();
      return rows.map(
        (row): AlertDelivery => ({
          alertId: row.alert_id,
          route: row.route,
          status: row.status as AlertDelivery['status'],
          attempts: row.attempts,
          lastError: row.last_error ?? undefined,
          deliveredAt: fromOptionalTimestamp(row.delivered_at),
        }),
      );
    },

    async recordAttempt(alertId, route, outcome) {
      await db
        .updateTable('alert_deliveries')
        .set((eb) => ({
          status: outcome.status,
          attempts: eb('attempts', '+', 1),
          last_error: outcome.error ?? null,
          delivered_at: outcome.status === 'delivered' ? toTimestamp(outcome.at) : null,
        }))
        .where('alert_id', '=', alertId)
        .where('route', '=', route)
        .execute();
    },

    async beginReview(participantId, alertId, at) {
      await db
        .insertInto('safety_reviews')
        .values({ participant_id: participantId, alert_id: alertId, started_at: toTimestamp(at) })
        .onConflict((conflict) => conflict.column('participant_id').doNothing())
        .execute();
    },

    async endReview(participantId) {
      const result = await db
        .deleteFrom('safety_reviews')
        .where('participant_id', '=', participantId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async holdTurn(participantId, messageId) {
      await db
        .updateTable('safety_reviews')
        .set({ held_message_id: messageId })
        .where('participant_id', '=', participantId)
        .where('held_message_id', 'is', null)
        .execute();
    },

    async heldTurn(participantId) {
      const row = await db
        .selectFrom('safety_reviews')
        .select('held_message_id')
        .where('participant_id', '=', participantId)
        .executeTakeFirst();
      return row?.held_message_id ?? undefined;
    },

    async underReview(participantId) {
      const row = await db
        .selectFrom('safety_reviews')
        .select('participant_id')
        .where('participant_id', '=', participantId)
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}
