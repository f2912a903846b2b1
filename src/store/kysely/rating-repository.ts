import type { Kysely, Selectable } from 'kysely';
import type { Rating, RatingRepository } from '../ratings-records.ts';
import { fromTimestamp, toTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';
import type { RatingsTable } from './rating-tables.ts';

function toRating(row: Selectable<RatingsTable>): Rating {
  return {
    id: row.id,
    conversation: row.conversation,
    ...(row.participant_id !== null ? { participantId: row.participant_id } : {}),
    ...(row.transcript_entry_id !== null ? { transcriptEntryId: Number(row.transcript_entry_id) } : {}),
    rubric: row.rubric,
    criterion: row.criterion,
    score: Number(row.score),
    rater: row.rater,
    ...(row.comment !== null ? { comment: row.comment } : {}),
    createdAt: fromTimestamp(row.created_at),
  };
}

export function createRatingRepository(db: Kysely<Database>): RatingRepository {
  return {
    async add(ratings) {
      if (ratings.length === 0) return;
      await db
        .insertInto('ratings')
        .values(
          ratings.map((rating) => ({
            id: rating.id,
            conversation: rating.conversation,
            participant_id: rating.participantId ?? null,
            transcript_entry_id: rating.transcriptEntryId ?? null,
            rubric: rating.rubric,
            criterion: rating.criterion,
            score: rating.score,
            rater: rating.rater,
            comment: rating.comment ?? null,
            created_at: toTimestamp(rating.createdAt),
          })),
        )
        .execute();
    },
    async list(filter = {}) {
      let query = db.selectFrom('ratings').selectAll();
      if (filter.conversation !== undefined) query = query.where('conversation', '=', filter.conversation);
      const rows = await query.orderBy('created_at').orderBy('id').execute();
      return rows.map(toRating);
    },
  };
}
