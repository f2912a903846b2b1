/** The human ratings table (migration 060); see `store/ratings-records.ts`. */
import type { TimestampColumn } from './column-types.ts';

export interface RatingsTable {
  id: string;
  conversation: string;
  participant_id: string | null;
  transcript_entry_id: number | null;
  rubric: string;
  criterion: string;
  score: number;
  rater: string;
  comment: string | null;
  created_at: TimestampColumn;
}
