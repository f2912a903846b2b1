import type { Kysely, Selectable } from 'kysely';
import type { DeliveryRecord, DeliveryRepository } from '../ports/channel-records.ts';
import { fromTimestamp, optionalField, toTimestamp } from './column-codecs.ts';
import type { Database, DeliveriesTable } from './database.ts';
import { insertDeliveryRow } from './sql/turn-records.ts';

/** `latest()` asks about at most this many ids per query (SQLite's parameter limit is far above it). */
const LOOKUP_CHUNK = 500;

export function createDeliveryRepository(db: Kysely<Database>): DeliveryRepository {
  return {
    async record(delivery) {
      const row = await insertDeliveryRow(db, [
        delivery.outboundId,
        delivery.participantId ?? null,
        delivery.channel,
        delivery.providerMessageId ?? null,
        delivery.status,
        delivery.errorCode ?? null,
        delivery.errorMessage ?? null,
        toTimestamp(delivery.createdAt),
      ]);
      return toDeliveryRecord(row);
    },

    async latest(outboundIds) {
      const latest = new Map<string, DeliveryRecord>();
      const unique = [...new Set(outboundIds)];
      for (let start = 0; start < unique.length; start += LOOKUP_CHUNK) {
        const rows = await db
          .selectFrom('deliveries')
          .selectAll()
          .where('outbound_id', 'in', unique.slice(start, start + LOOKUP_CHUNK))
          .orderBy('id')
          .execute();
        for (const row of rows) latest.set(row.outbound_id, toDeliveryRecord(row));
      }
      return latest;
    },

    async listFor(outboundId) {
      const rows = await db
        .selectFrom('deliveries')
        .selectAll()
        .where('outbound_id', '=', outboundId)
        .orderBy('id')
        .execute();
      return rows.map(toDeliveryRecord);
    },

    async findByProviderId(channel, providerMessageId) {
      const row = await db
        .selectFrom('deliveries')
        .selectAll()
        .where('channel', '=', channel)
        .where('provider_message_id', '=', providerMessageId)
        .orderBy('id')
        .executeTakeFirst();
      return row && toDeliveryRecord(row);
    },
  };
}

function toDeliveryRecord(row: Selectable<DeliveriesTable>): DeliveryRecord {
  return {
    id: Number(row.id),
    outboundId: row.outbound_id,
    channel: row.channel,
    status: row.status,
    createdAt: fromTimestamp(row.created_at),
    ...optionalField('participantId', row.participant_id),
    ...optionalField('providerMessageId', row.provider_message_id),
    ...optionalField('errorCode', row.error_code),
    ...optionalField('errorMessage', row.error_message),
  };
}
