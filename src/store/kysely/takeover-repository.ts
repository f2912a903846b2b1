import type { Kysely, Selectable } from 'kysely';
import type { Takeover, TakeoverRepository } from '../safety-records.ts';
import { fromTimestamp, toTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';
import type { ConversationTakeoversTable } from './safety-tables.ts';

function toTakeover(row: Selectable<ConversationTakeoversTable>): Takeover {
  return {
    participantId: row.participant_id,
    takenBy: row.taken_by,
    startedAt: fromTimestamp(row.started_at),
    timers: row.timers === 'pause' ? 'pause' : 'keep',
    lastStaffMessageAt: fromTimestamp(row.last_staff_message_at),
  };
}

export function createTakeoverRepository(db: Kysely<Database>): TakeoverRepository {
  const get = async (participantId: string) => {
    const row = await db
      .selectFrom('conversation_takeovers')
      .selectAll()
      .where('participant_id', '=', participantId)
      .executeTakeFirst();
    return row && toTakeover(row);
  };
  return {
    async begin(takeover) {
      // ON CONFLICT DO NOTHING: two staff members taking over at once, one wins (a unique violation would abort a
      // PostgreSQL transaction).
      const inserted = await db
        .insertInto('conversation_takeovers')
        .values({
          participant_id: takeover.participantId,
          taken_by: takeover.takenBy,
          started_at: toTimestamp(takeover.startedAt),
          timers: takeover.timers,
          last_staff_message_at: toTimestamp(takeover.lastStaffMessageAt),
        })
        .onConflict((conflict) => conflict.column('participant_id').doNothing())
        .returning('participant_id')
        .executeTakeFirst();
      return inserted !== undefined;
    },
    get,
    async staffMessageSent(participantId, at) {
      await db
        .updateTable('conversation_takeovers')
        .set({ last_staff_message_at: toTimestamp(at) })
        .where('participant_id', '=', participantId)
        .execute();
    },
    async end(participantId) {
      const takeover = await get(participantId);
      if (!takeover) return undefined;
      await db.deleteFrom('conversation_takeovers').where('participant_id', '=', participantId).execute();
      return takeover;
    },
  };
}
