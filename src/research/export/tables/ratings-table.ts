import { parseEvalConversation } from '../../ratings/eval-conversation.ts';
import type { ExportColumn, ExportContext, ExportRow, ExportTable } from '../export-types.ts';
import { rowFilter } from '../row-filter.ts';

const columns: ExportColumn[] = [
  { name: 'rating_id', type: 'string', description: 'Rating id' },
  {
    name: 'conversation',
    type: 'string',
    description:
      "What was rated: participant:<participant id>, or a promptpipe eval run's conversation eval:<run id>:<configuration>/<persona>.<repeat>",
  },
  {
    name: 'participant_id',
    type: 'string',
    description: 'The study participant rated, when it is a study conversation',
  },
  {
    name: 'transcript_entry_id',
    type: 'integer',
    description:
      'The coach turn of a study conversation rated (messages.entry_id); empty when the whole conversation was rated',
  },
  {
    name: 'eval_run_id',
    type: 'string',
    description: "An evaluation run's id (its report's run.json and report.json); empty for a study conversation",
  },
  { name: 'eval_configuration', type: 'string', description: "The evaluation run's coach configuration (A, B)" },
  { name: 'eval_persona', type: 'string', description: 'The persona of the evaluation conversation' },
  { name: 'eval_repeat', type: 'integer', description: "The persona's run number within the evaluation (1, 2, ...)" },
  {
    name: 'eval_line',
    type: 'integer',
    description:
      "The coach turn of an evaluation conversation rated: its line number in the run's transcript (report.json " +
      'conversations[].lines, counted from 1); empty when the whole conversation was rated',
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
  const keeps = rowFilter(filter);
  for (const rating of await store.ratings.list()) {
    if (!keeps(rating.participantId, rating.createdAt)) continue;
    // An evaluation conversation's coach turn is a line of the run's transcript, stored in the same column.
    const evaluation = parseEvalConversation(rating.conversation);
    yield {
      rating_id: rating.id,
      conversation: rating.conversation,
      participant_id: rating.participantId ?? null,
      transcript_entry_id: evaluation ? null : (rating.transcriptEntryId ?? null),
      eval_run_id: evaluation?.runId ?? null,
      eval_configuration: evaluation?.configuration ?? null,
      eval_persona: evaluation?.persona ?? null,
      eval_repeat: evaluation?.repeat ?? null,
      eval_line: evaluation ? (rating.transcriptEntryId ?? null) : null,
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
    'Human ratings of conversations with the evaluation rubric, one row per criterion scored: study conversations ' +
    '(dashboard: a participant\'s "Rate this conversation") and promptpipe eval runs\' conversations (dashboard: ' +
    'Evaluations). `promptpipe eval-report --ratings ratings.csv` computes the judge-human agreement of a run from ' +
    "this file (each rater's latest whole-conversation score per criterion).",
  columns,
  rows,
};
