import type { Kysely } from 'kysely';
import type { ConversationHistoryRepository } from '../store.ts';
import type { Database } from './database.ts';
import { inTransaction } from './in-transaction.ts';
import { preparedByLimit, preparedQuery } from './prepared-query.ts';

const latestMessages = preparedByLimit((db, params: { participantId: string }, limit) =>
  db
    .selectFrom('conversation_messages')
    .select(['seq', 'message'])
    .where('participant_id', '=', params.participantId)
    .orderBy('seq', 'desc')
    .limit(limit),
);

const insertMessage = preparedQuery((db, row: { participant_id: string; seq: number; message: string }) =>
  db.insertInto('conversation_messages').values(row),
);

const deleteBefore = preparedQuery((db, params: { participantId: string; seq: number }) =>
  db
    .deleteFrom('conversation_messages')
    .where('participant_id', '=', params.participantId)
    .where('seq', '<', params.seq),
);

export function createConversationHistoryRepository(
  db: Kysely<Database>,
  database: object,
): ConversationHistoryRepository {
  return {
    database,
    async latest(participantId, limit) {
      const { rows } = await latestMessages(limit).execute(db, { participantId });
      return rows.reverse();
    },

    async newest(participantId) {
      const [row] = (await latestMessages(1).execute(db, { participantId })).rows;
      return row;
    },

    async append(participantId, firstSeq, messages) {
      if (messages.length === 0) return;
      // The primary key refuses a number already taken; the transaction keeps the messages together.
      await inTransaction(db, async (transaction) => {
        for (const [index, message] of messages.entries()) {
          await insertMessage.execute(transaction, { participant_id: participantId, seq: firstSeq + index, message });
        }
      });
    },

    async deleteBefore(participantId, seq) {
      const result = await deleteBefore.execute(db, { participantId, seq });
      return Number(result.numAffectedRows ?? 0);
    },
  };
}
