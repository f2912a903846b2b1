import type { Kysely } from 'kysely';
import type { ConversationHistoryRepository } from '../ports/conversation-store.ts';
import type { Database } from './database.ts';
import { inTransaction } from './in-transaction.ts';
import {
  deleteConversationRowsBefore,
  insertConversationRow,
  latestConversationRows,
} from './sql/conversation-messages.ts';

export function createConversationHistoryRepository(db: Kysely<Database>): ConversationHistoryRepository {
  return {
    async latest(participantId, limit) {
      return (await latestConversationRows(db, participantId, limit)).reverse();
    },

    async newest(participantId) {
      const [row] = await latestConversationRows(db, participantId, 1);
      return row;
    },

    async append(participantId, firstSeq, messages) {
      if (messages.length === 0) return;
      // The primary key refuses a number already taken; the transaction keeps the messages together.
      await inTransaction(db, async (transaction) => {
        for (const [index, message] of messages.entries()) {
          await insertConversationRow(transaction, participantId, firstSeq + index, message);
        }
      });
    },

    async deleteBefore(participantId, seq) {
      return deleteConversationRowsBefore(db, participantId, seq);
    },
  };
}
