import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DeliveryRecord, DeliveryRepository } from '../store.ts';
import { fromTimestamp, optionalField, toTimestamp } from './column-codecs.ts';
import type { Database, DeliveriesTable } from './database.ts';
import { firstRow, preparedQuery } from './prepared-query.ts';

const insertDelivery = preparedQuery((db, row: Insertable<DeliveriesTable>) =>
  db.insertInto('deliveries').values(row).returningAll(),
);

/** `latest()` asks about at most this many ids per query (SQLite's parameter limit is far above it). */
const LOOKUP_CHUNK = 500;

export function createDeliveryRepository(db: Kysely<Database>): DeliveryRepository {
  return {
    async record(delivery) {
      const row: Insertable<DeliveriesTable> = {
        outbound_id: delivery.outboundId,
        participant_id: delivery.participantId ?? null,
        channel: delivery.channel,
        provider_message_id: delivery.providerMessageId ?? null,
        status: delivery.status,
        error_code: delivery.errorCode ?? null,
        error_message: delivery.errorMessage ?? null,
        created_at: toTimestamp(delivery.createdAt),
      };
      const { rows } = await insertDelivery.execute(db, row);
      return toDeliveryRecord(firstRow(rows));
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
