/**
 * Human ratings (migration 060): staff score a whole conversation, or one coach turn of it, on a rubric's criteria —
 * the same rubric the evaluation's judge uses, so the two can be compared (judge–human agreement). A conversation is
 * named by a key: `participant:<id>` for a study participant, or an evaluation run's `A/ada.1`.
 */

export interface NewRating {
  id: string;
  conversation: string;
  /** The study participant rated, when the conversation is one (the rating goes with them when they are deleted). */
  participantId?: string;
  /** The transcript entry of the coach turn rated; absent for the whole conversation. */
  transcriptEntryId?: number;
  rubric: string;
  criterion: string;
  score: number;
  /** Who rated (the staff member's name or the session's label). */
  rater: string;
  comment?: string;
  createdAt: Date;
}

export type Rating = NewRating;

export interface RatingRepository {
  /** Writes the ratings of one submission together. */
  add(ratings: readonly NewRating[]): Promise<void>;
  /** Oldest first, optionally one conversation's. */
  list(filter?: { conversation?: string }): Promise<Rating[]>;
}

/** The conversation key of a study participant. */
export function participantConversation(participantId: string): string {
  return `participant:${participantId}`;
}
