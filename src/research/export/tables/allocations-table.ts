import type { ExportColumn } from '../export-types.ts';
import { keysetTable } from './keyset-table.ts';

const columns: ExportColumn[] = [
  { name: 'participant_id', type: 'string', description: 'Participant id' },
  { name: 'study_id', type: 'string', description: 'The study of the design in force at enrollment' },
  { name: 'arm', type: 'string', description: 'The arm in force: the drawn one, or the one a staff override set' },
  { name: 'allocated_arm', type: 'string', description: 'The arm the randomisation drew (never changes)' },
  {
    name: 'stratum',
    type: 'string',
    description: 'field=value pairs of the stratum, |-separated (empty when the method is not stratified)',
  },
  { name: 'method', type: 'string', description: 'simple, permuted_blocks or stratified_blocks' },
  { name: 'block_index', type: 'integer', description: "The stratum's block, from 0 (empty for simple)" },
  { name: 'block_size', type: 'integer', description: 'That block’s size' },
  { name: 'block_position', type: 'integer', description: 'The position taken in the block, from 0' },
  {
    name: 'stratum_sequence',
    type: 'integer',
    description: "1-based enrollment order within the stratum: with the design's seed, it recomputes the arm",
  },
  { name: 'draw', type: 'number', description: 'The uniform draw in [0, 1) that chose the arm (simple only)' },
  { name: 'design_hash', type: 'string', description: 'SHA-256 of the design in force (GET /study)' },
  { name: 'allocated_at', type: 'timestamp', description: 'When the participant was allocated: at enrollment' },
  { name: 'overridden_at', type: 'timestamp', description: 'When staff changed the arm, if they did' },
  { name: 'overridden_by', type: 'string', description: 'Who changed it' },
  { name: 'override_reason', type: 'string', description: 'Why, as they wrote it' },
];

export const allocationsTable = keysetTable({
  name: 'allocations',
  description:
    "A randomised trial's allocations (STUDY_DESIGN_FILE): one row per participant allocated at enrollment, with " +
    'what an auditor needs to recompute the arm from the design, and any staff override. Empty without a design.',
  columns,
  page: ({ store }, after: string | undefined, limit) => store.allocations.page(after, limit),
  key: (allocation) => allocation.participantId,
  filterBy: (allocation) => [allocation.participantId, allocation.allocatedAt],
  row: (allocation) => ({
    participant_id: allocation.participantId,
    study_id: allocation.studyId,
    arm: allocation.armId,
    allocated_arm: allocation.allocatedArmId,
    stratum: allocation.stratum,
    method: allocation.method,
    block_index: allocation.blockIndex,
    block_size: allocation.blockSize,
    block_position: allocation.blockPosition,
    stratum_sequence: allocation.stratumSequence,
    draw: allocation.draw,
    design_hash: allocation.designHash,
    allocated_at: allocation.allocatedAt.toISOString(),
    overridden_at: allocation.override?.at.toISOString() ?? null,
    overridden_by: allocation.override?.by ?? null,
    override_reason: allocation.override?.reason ?? null,
  }),
});
