import type { Kysely, Selectable } from 'kysely';
import type { WebChatToken, WebChatTokenRepository } from '../ports/channel-records.ts';
import { fromOptionalTimestamp, fromTimestamp, toTimestamp } from './column-codecs.ts';
import type { Database, WebChatTokensTable } from './database.ts';

export function createWebChatTokenRepository(db: Kysely<Database>): WebChatTokenRepository {
  async function revokeAll(runner: Kysely<Database>, participantId: string, now: Date): Promise<number> {
    const result = await runner
      .updateTable('web_chat_tokens')
      .set({ revoked_at: toTimestamp(now) })
      .where('participant_id', '=', participantId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  return {
    async issue(participantId, token, now) {
      // At most one active token per participant: the revocation and the new row commit together.
      const write = async (runner: Kysely<Database>): Promise<void> => {
        await revokeAll(runner, participantId, now);
        await runner
          .insertInto('web_chat_tokens')
          .values({ token, participant_id: participantId, created_at: toTimestamp(now), revoked_at: null })
          .execute();
      };
      if (db.isTransaction) await write(db);
      else await db.transaction().execute(write);
      return { token, participantId, createdAt: now, revokedAt: undefined };
    },
    async getActive(participantId) {
      const row = await db
        .selectFrom('web_chat_tokens')
        .selectAll()
        .where('participant_id', '=', participantId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return row && toWebChatToken(row);
    },
    async find(token) {
      const row = await db.selectFrom('web_chat_tokens').selectAll().where('token', '=', token).executeTakeFirst();
      return row && toWebChatToken(row);
    },
    revokeAll: (participantId, now) => revokeAll(db, participantId, now),
  };
}

function toWebChatToken(row: Selectable<WebChatTokensTable>): WebChatToken {
  return {
    token: row.token,
    participantId: row.participant_id,
    createdAt: fromTimestamp(row.created_at),
    revokedAt: fromOptionalTimestamp(row.revoked_at),
  };
}
