import type { Kysely, Selectable } from 'kysely';
import type { TelegramRepository, TelegramSentMessage } from '../ports/channel-records.ts';
import { fromOptionalJson, fromTimestamp, optionalField, toOptionalJson, toTimestamp } from './column-codecs.ts';
import type { Database, TelegramMessagesTable } from './database.ts';
import { inTransaction } from './in-transaction.ts';

type StoredPoll = { question: string; options: string[] };

function fromRow(row: Selectable<TelegramMessagesTable>): TelegramSentMessage {
  const poll = fromOptionalJson<StoredPoll>(row.poll);
  return {
    outboundId: row.outbound_id,
    participantId: row.participant_id,
    chatId: row.chat_id,
    messageId: row.message_id,
    ...optionalField('poll', poll && row.poll_id ? { pollId: row.poll_id, ...poll } : undefined),
    createdAt: fromTimestamp(row.created_at),
  };
}

export function createTelegramRepository(db: Kysely<Database>): TelegramRepository {
  return {
    async issueStartCode(code, now) {
      await inTransaction(db, async (transaction) => {
        // Codes are issued every time a link is shown: the spent ones are cleared here so the table stays small.
        await transaction
          .deleteFrom('telegram_start_codes')
          .where('participant_id', '=', code.participantId)
          .where((expression) =>
            expression.or([expression('used_at', 'is not', null), expression('expires_at', '<=', toTimestamp(now))]),
          )
          .execute();
        await transaction
          .insertInto('telegram_start_codes')
          .values({
            code_hash: code.codeHash,
            participant_id: code.participantId,
            created_at: toTimestamp(code.createdAt),
            expires_at: toTimestamp(code.expiresAt),
            used_at: null,
          })
          .execute();
      });
    },

    useStartCode(codeHash, now) {
      const nowText = toTimestamp(now);
      return inTransaction(db, async (transaction) => {
        // One UPDATE … RETURNING: of two uses racing (two instances, a repeated update), exactly one gets the row.
        const used = await transaction
          .updateTable('telegram_start_codes')
          .set({ used_at: nowText })
          .where('code_hash', '=', codeHash)
          .where('used_at', 'is', null)
          .where('expires_at', '>', nowText)
          .returning('participant_id')
          .executeTakeFirst();
        if (!used) return undefined;
        // The other links of the participant (shown earlier, sent by mail) must not bind a second chat later.
        await transaction
          .updateTable('telegram_start_codes')
          .set({ used_at: nowText })
          .where('participant_id', '=', used.participant_id)
          .where('used_at', 'is', null)
          .execute();
        return used.participant_id;
      });
    },

    async linkChat(participantId, chatId, now) {
      await inTransaction(db, async (transaction) => {
        await transaction
          .deleteFrom('telegram_chats')
          .where((expression) =>
            expression.or([expression('participant_id', '=', participantId), expression('chat_id', '=', chatId)]),
          )
          .execute();
        await transaction
          .insertInto('telegram_chats')
          .values({ participant_id: participantId, chat_id: chatId, linked_at: toTimestamp(now) })
          .execute();
      });
    },

    async chatOf(participantId) {
      const row = await db
        .selectFrom('telegram_chats')
        .select('chat_id')
        .where('participant_id', '=', participantId)
        .executeTakeFirst();
      return row?.chat_id;
    },

    async participantOfChat(chatId) {
      const row = await db
        .selectFrom('telegram_chats')
        .select('participant_id')
        .where('chat_id', '=', chatId)
        .executeTakeFirst();
      return row?.participant_id;
    },

    async recordSent(message) {
      await db
        .insertInto('telegram_messages')
        .values({
          outbound_id: message.outboundId,
          participant_id: message.participantId,
          chat_id: message.chatId,
          message_id: message.messageId,
          poll_id: message.poll?.pollId ?? null,
          poll: toOptionalJson(
            message.poll
              ? ({ question: message.poll.question, options: message.poll.options } as StoredPoll)
              : undefined,
          ),
          created_at: toTimestamp(message.createdAt),
        })
        .onConflict((conflict) => conflict.column('outbound_id').doNothing())
        .execute();
    },

    async sentByOutboundId(outboundId) {
      const row = await db
        .selectFrom('telegram_messages')
        .selectAll()
        .where('outbound_id', '=', outboundId)
        .executeTakeFirst();
      return row ? fromRow(row) : undefined;
    },

    async sentPoll(pollId) {
      const row = await db.selectFrom('telegram_messages').selectAll().where('poll_id', '=', pollId).executeTakeFirst();
      return row ? fromRow(row) : undefined;
    },
  };
}
