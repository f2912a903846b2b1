import type { Kysely } from 'kysely';
import type { BroadcastRepository } from '../ports/research-reads.ts';
import { fromJson, fromTimestamp, toJson, toTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';

export function createBroadcastRepository(db: Kysely<Database>): BroadcastRepository {
  return {
    async create(broadcast) {
      await db
        .insertInto('broadcasts')
        .values({
          id: broadcast.id,
          text: broadcast.text,
          filter: toJson(broadcast.filter),
          recipients: broadcast.recipients,
          created_at: toTimestamp(broadcast.createdAt),
        })
        .execute();
    },

    async get(id) {
      const row = await db.selectFrom('broadcasts').selectAll().where('id', '=', id).executeTakeFirst();
      if (!row) return undefined;
      return {
        id: row.id,
        text: row.text,
        filter: fromJson<Record<string, unknown>>(row.filter),
        recipients: Number(row.recipients),
        createdAt: fromTimestamp(row.created_at),
      };
    },
  };
}
