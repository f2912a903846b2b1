import type { Kysely } from 'kysely';
import type { WhatsAppAuthRepository } from '../ports/whatsapp-auth.ts';
import { toTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';
import { inTransaction } from './in-transaction.ts';

export function createWhatsAppAuthRepository(db: Kysely<Database>): WhatsAppAuthRepository {
  return {
    async read(session, category, keyIds) {
      if (keyIds.length === 0) return new Map();
      const rows = await db
        .selectFrom('whatsapp_auth')
        .select(['key_id', 'value'])
        .where('session', '=', session)
        .where('category', '=', category)
        .where('key_id', 'in', keyIds)
        .execute();
      return new Map(rows.map((row) => [row.key_id, row.value]));
    },
    async write(session, entries, now) {
      if (entries.length === 0) return;
      // Atomic: Baileys hands over a session's keys as one update; half of it stored would corrupt the session.
      await inTransaction(db, async (transaction) => {
        for (const entry of entries) {
          const value = entry.value;
          if (value === null) {
            await transaction
              .deleteFrom('whatsapp_auth')
              .where('session', '=', session)
              .where('category', '=', entry.category)
              .where('key_id', '=', entry.keyId)
              .execute();
            continue;
          }
          const updatedAt = toTimestamp(now);
          await transaction
            .insertInto('whatsapp_auth')
            .values({
              session,
              category: entry.category,
              key_id: entry.keyId,
              value,
              updated_at: updatedAt,
            })
            .onConflict((conflict) =>
              conflict.columns(['session', 'category', 'key_id']).doUpdateSet({ value, updated_at: updatedAt }),
            )
            .execute();
        }
      });
    },
    async clear(session) {
      const result = await db.deleteFrom('whatsapp_auth').where('session', '=', session).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
