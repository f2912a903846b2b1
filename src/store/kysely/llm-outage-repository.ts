import type { Kysely } from 'kysely';
import type { LlmOutageRepository } from '../ports/inbound-store.ts';
import { fromTimestamp, toTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';
import { endLlmOutageRow } from './sql/turn-records.ts';

export function createLlmOutageRepository(db: Kysely<Database>): LlmOutageRepository {
  return {
    async begin(outage) {
      // ON CONFLICT DO NOTHING rather than look-then-insert: two failures racing (two instances) must start one
      // outage, and a unique violation would abort a PostgreSQL transaction.
      const inserted = await db
        .insertInto('llm_outages')
        .values({
          participant_id: outage.participantId,
          started_at: toTimestamp(outage.startedAt),
          source_message_id: outage.sourceMessageId ?? null,
        })
        .onConflict((conflict) => conflict.column('participant_id').doNothing())
        .returning('participant_id')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    async get(participantId) {
      const row = await db
        .selectFrom('llm_outages')
        .selectAll()
        .where('participant_id', '=', participantId)
        .executeTakeFirst();
      return (
        row && {
          participantId: row.participant_id,
          startedAt: fromTimestamp(row.started_at),
          sourceMessageId: row.source_message_id ?? undefined,
        }
      );
    },

    async end(participantId) {
      return endLlmOutageRow(db, participantId);
    },
  };
}
