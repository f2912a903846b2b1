import type { ExportColumn, ExportContext, ExportRow, ExportTable } from '../export-types.ts';

const columns: ExportColumn[] = [
  { name: 'rating_id', type: 'string', description: 'Rating id' },
  {
    name: 'conversation',
    type: 'string',
    description:
      "What was rated: participant:<participant id>, or an evaluation run's conversation (A/<persona>.<run>)",
  },
  {
    name: 'participant_id',
    type: 'string',
    description: 'The study participant rated, when it is a study conversation',
  },
  {
    name: 'transcript_entry_id',
    type: 'integer',
    description: 'The coach turn rated (messages.entry_id); empty when the whole conversation was rated',
  },
  { name: 'rubric', type: 'string', description: 'The rubric used (its name; eval/rubric.yaml by default)' },
  { name: 'criterion', type: 'string', description: "The rubric criterion's id (e.g. empathy, clarity)" },
  { name: 'score', type: 'integer', description: "The score on the rubric's scale (1-5 in the default rubric)" },
  { name: 'rater', type: 'string', description: 'The staff member who rated (their sign-in), or PROMPTPIPE_API_TOKEN' },
  { name: 'comment', type: 'string', description: "The rater's comment, if any" },
  { name: 'created_at', type: 'timestamp', description: 'When it was rated (UTC, study clock)' },
];

async function* rows(context: ExportContext): AsyncGenerator<ExportRow> {
  const { store, filter } = context;
  const wanted = new Set(filter.participantIds);
  for (const rating of await store.ratings.list()) {
    if (wanted.size > 0 && (!rating.participantId || !wanted.has(rating.participantId))) continue;
    if (filter.since && rating.createdAt < filter.since) continue;
    yield {
      rating_id: rating.id,
      conversation: rating.conversation,
      participant_id: rating.participantId ?? null,
      transcript_entry_id: rating.transcriptEntryId ?? null,
      rubric: rating.rubric,
      criterion: rating.criterion,
      score: rating.score,
      rater: rating.rater,
      comment: rating.comment ?? null,
      created_at: rating.createdAt.toISOString(),
    };
  }
}

export const ratingsTable: ExportTable = {
  name: 'ratings',
  description:
    'Human ratings of conversations with the evaluation rubric (dashboard: a participant\'s "Rate" page), one row per criterion scored.',
  columns,
  rows,
};
