import { type Kysely, type Selectable, sql } from 'kysely';
import type { InboundMessage, InboundMessageRepository, NewInboundMessage } from '../ports/inbound-store.ts';
import {
  fromOptionalJson,
  fromOptionalTimestamp,
  fromTimestamp,
  optionalField,
  toOptionalJson,
  toTimestamp,
} from './column-codecs.ts';
import type { Database, InboundMessagesTable } from './database.ts';
import { literalLimit } from './literal-limit.ts';
import { insertInboundRow, markInboundRowDone, nextUnprocessedInboundRow } from './sql/inbound-messages.ts';

/**
 * `received` written into the SQL text: the look-ups of unprocessed messages walk partial indexes of received messages
 * only (migration 015), which a bound parameter would not let SQLite choose without planning again on every run.
 */
const RECEIVED = sql.lit('received');

export function createInboundMessageRepository(db: Kysely<Database>): InboundMessageRepository {
  async function findOriginal(message: NewInboundMessage): Promise<Selectable<InboundMessagesTable> | undefined> {
    if (message.providerMessageId === undefined) return undefined;
    return db
      .selectFrom('inbound_messages')
      .selectAll()
      .where('channel', '=', message.channel)
      .where('provider_message_id', '=', message.providerMessageId)
      .executeTakeFirst();
  }

  return {
    async record(message) {
      // ON CONFLICT DO NOTHING rather than look-then-insert: two deliveries of one message racing each other (a
      // provider retrying a webhook) must still store it once, and a unique violation would abort a PostgreSQL
      // transaction.
      const inserted = await insertInboundRow(db, {
        id: message.id,
        channel: message.channel,
        participant_id: message.participantId,
        provider_message_id: message.providerMessageId ?? null,
        from_phone: message.from,
        text: message.text,
        poll_answer: toOptionalJson(message.pollAnswer),
        status: 'received',
        received_at: toTimestamp(message.receivedAt),
        processed_at: null,
        last_error: null,
      });
      if (inserted !== undefined) return { message: toInboundMessage(inserted), duplicate: false };
      const original =
        (await findOriginal(message)) ??
        (await db.selectFrom('inbound_messages').selectAll().where('id', '=', message.id).executeTakeFirst());
      if (original === undefined) throw new Error(`inbound message ${message.id} was neither stored nor found`);
      return { message: toInboundMessage(original), duplicate: true };
    },

    async get(id) {
      const row = await db.selectFrom('inbound_messages').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toInboundMessage(row);
    },

    async markProcessed(id, now) {
      await markInboundRowDone(db, id, 'processed', toTimestamp(now), null);
    },

    async markFailed(id, error, now) {
      await markInboundRowDone(db, id, 'failed', toTimestamp(now), error);
    },

    async listUnprocessed(participantId) {
      // Both read the per-participant backlog index (`status` compared with a literal), then sort: a backlog is small.
      let query = db.selectFrom('inbound_messages').selectAll().where('status', '=', RECEIVED);
      if (participantId !== undefined) query = query.where('participant_id', '=', participantId);
      const rows = await query.orderBy('received_at').orderBy('arrival_order').execute();
      return rows.map(toInboundMessage);
    },

    async nextUnprocessed(participantId) {
      const row = await nextUnprocessedInboundRow(db, participantId);
      return row && toInboundMessage(row);
    },

    async hold(participantId, reason) {
      // The backlog index (received messages by participant) finds them; `last_error is null` keeps each one's count
      // to its first hold.
      const result = await db
        .updateTable('inbound_messages')
        .set({ last_error: reason })
        .where('participant_id', '=', participantId)
        .where('status', '=', RECEIVED)
        .where('last_error', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async listParticipantsWithUnprocessed() {
      const rows = await db
        .selectFrom('inbound_messages')
        .select('participant_id')
        .select((expression) => expression.fn.min('arrival_order').as('first'))
        .where('status', '=', RECEIVED)
        .groupBy('participant_id')
        .orderBy('first')
        .execute();
      return rows.map((row) => row.participant_id);
    },

    async lastReceivedAt(participantId, channel) {
      const row = await db
        .selectFrom('inbound_messages')
        .select('received_at')
        .where('participant_id', '=', participantId)
        .where('channel', '=', channel)
        .orderBy('received_at', 'desc')
        .limit(literalLimit(1))
        .executeTakeFirst();
      return row && fromTimestamp(row.received_at);
    },
  };
}

function toInboundMessage(row: Selectable<InboundMessagesTable>): InboundMessage {
  return {
    id: row.id,
    channel: row.channel,
    participantId: row.participant_id,
    ...optionalField('providerMessageId', row.provider_message_id),
    from: row.from_phone,
    text: row.text,
    ...optionalField('pollAnswer', fromOptionalJson<NonNullable<InboundMessage['pollAnswer']>>(row.poll_answer)),
    receivedAt: fromTimestamp(row.received_at),
    status: row.status as InboundMessage['status'],
    processedAt: fromOptionalTimestamp(row.processed_at),
    lastError: row.last_error ?? undefined,
  };
}
