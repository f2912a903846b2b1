import { decisionJson } from '../../../trials/decision-json.ts';
import type { ExportColumn } from '../export-types.ts';
import { keysetTable } from './keyset-table.ts';

const columns: ExportColumn[] = [
  { name: 'id', type: 'string', description: 'study|participant|decision point|local date|slot: the moment decided' },
  { name: 'participant_id', type: 'string', description: 'Participant id' },
  { name: 'study_id', type: 'string', description: 'The study of the design in force' },
  { name: 'arm', type: 'string', description: 'The arm in force when decided (empty without an allocation)' },
  { name: 'decision_point', type: 'string', description: "The design's decision point id" },
  { name: 'local_date', type: 'date', description: "The participant's local date of the moment" },
  {
    name: 'slot',
    type: 'integer',
    description: "Which of the point's times (sorted), from 0; 0 at the daily prompt time",
  },
  { name: 'intended_at', type: 'timestamp', description: 'When the moment was meant to be, jitter included (UTC)' },
  { name: 'intended_local', type: 'string', description: 'The same, local wall-clock time' },
  { name: 'available', type: 'boolean', description: 'Whether the participant was available' },
  {
    name: 'unavailable_reason',
    type: 'string',
    description:
      'Why not: missed_moment (decided more than MISSED_PROMPT_GRACE after it was due, e.g. after an outage), ' +
      'randomisation_paused (staff paused the draws), paused, withdrawn, idle, quiet_hours or answered_today',
  },
  { name: 'probabilities', type: 'json', description: "Each option's probability for this arm" },
  { name: 'option', type: 'string', description: 'The option drawn (empty when unavailable)' },
  { name: 'draw', type: 'number', description: 'The uniform draw in [0, 1) that chose it' },
  { name: 'design_hash', type: 'string', description: 'SHA-256 of the design in force (GET /study)' },
  { name: 'decided_at', type: 'timestamp', description: 'When it was decided (UTC)' },
  { name: 'sent_outbound_id', type: 'string', description: 'The message the option sent (messages.outbound_id)' },
  { name: 'sent_at', type: 'timestamp', description: 'When it was sent (UTC); empty when nothing was' },
  { name: 'outcome', type: 'json', description: 'The proximal outcome the design names, once known' },
  { name: 'outcome_at', type: 'timestamp', description: 'When the outcome was filled in' },
];

export const decisionsTable = keysetTable({
  name: 'decisions',
  description:
    'Micro-randomised decisions (STUDY_DESIGN_FILE decision_points): one row per participant, decision point and ' +
    'moment, also when unavailable, with the probabilities, the draw, the option, what was sent and the outcome.',
  columns,
  page: ({ store }, after: string | undefined, limit) => store.decisions.page(after, limit),
  key: (decision) => decision.id,
  filterBy: (decision) => [decision.participantId, decision.intendedAt],
  row: (decision) => decisionJson(decision),
});
