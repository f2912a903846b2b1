import type { Kysely, Selectable } from 'kysely';
import type { EventRepository, StoredEvent } from '../ports/conversation-store.ts';
import { fromJson, fromTimestamp, optionalField, toJson, toTimestamp } from './column-codecs.ts';
import type { Database, EventsTable } from './database.ts';
import { inTransaction } from './in-transaction.ts';
import { literalLimit } from './literal-limit.ts';
import { insertEventRow } from './sql/turn-records.ts';
import { changesStudyDays, projectEvent } from './study-day-projection.ts';

export function createEventRepository(db: Kysely<Database>): EventRepository {
  return {
    async record(event) {
      const row = {
        participant_id: event.participantId ?? null,
        type: event.type,
        data: toJson(event.data),
        source_message_id: event.sourceMessageId ?? null,
        created_at: toTimestamp(event.createdAt),
      };
      if (!changesStudyDays(event)) {
        await insertEventRow(db, row);
        return;
      }
      // The dashboard's study-day summary changes with the event, in the same transaction.
      await inTransaction(db, async (transaction) => {
        await insertEventRow(transaction, row);
        await projectEvent(transaction, event);
      });
    },

    async list(filter = {}) {
      let query = db.selectFrom('events').selectAll();
      if (filter.participantId !== undefined) query = query.where('participant_id', '=', filter.participantId);
      if (filter.type !== undefined) query = query.where('type', '=', filter.type);
      if (filter.limit === undefined) {
        const rows = await query.orderBy('id', 'asc').execute();
        return rows.map(toStoredEvent);
      }
      // Like the transcript: with a limit, the most recent events, still oldest first.
      const rows = await query.orderBy('id', 'desc').limit(literalLimit(filter.limit)).execute();
      return rows.reverse().map(toStoredEvent);
    },
  };
}

export function toStoredEvent(row: Selectable<EventsTable>): StoredEvent {
  return {
    id: Number(row.id),
    ...optionalField('participantId', row.participant_id),
    type: row.type,
    data: fromJson<Record<string, unknown>>(row.data),
    ...optionalField('sourceMessageId', row.source_message_id),
    createdAt: fromTimestamp(row.created_at),
  };
}
