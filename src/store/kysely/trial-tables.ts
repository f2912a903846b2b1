/** The tables of a randomised trial (migration 040), part of `Database`. */
import type { JsonColumn, NullableJsonColumn, NullableTimestampColumn, TimestampColumn } from './column-types.ts';

export interface AllocationBlocksTable {
  study_id: string;
  stratum: string;
  block_index: number;
  block_size: number;
  position: number;
  allocated: number;
}

export interface AllocationsTable {
  participant_id: string;
  study_id: string;
  arm_id: string;
  allocated_arm_id: string;
  stratum: string;
  method: string;
  block_index: number | null;
  block_size: number | null;
  block_position: number | null;
  stratum_sequence: number;
  draw: number | null;
  design_hash: string;
  allocated_at: TimestampColumn;
  overridden_at: NullableTimestampColumn;
  overridden_by: string | null;
  override_reason: string | null;
}

/** Migration 041: one row per decision point moment. */
export interface DecisionsTable {
  id: string;
  participant_id: string;
  study_id: string;
  arm_id: string;
  decision_point_id: string;
  local_date: string;
  slot: number;
  intended_at: TimestampColumn;
  intended_local: string;
  /** 1 or 0: an integer on both databases (SQLite binds no booleans). */
  available: number;
  unavailable_reason: string | null;
  probabilities: JsonColumn;
  option: string | null;
  draw: number | null;
  design_hash: string;
  decided_at: TimestampColumn;
  sent_outbound_id: string | null;
  sent_at: NullableTimestampColumn;
  outcome: NullableJsonColumn;
  outcome_at: NullableTimestampColumn;
}

export interface TrialTables {
  allocation_blocks: AllocationBlocksTable;
  allocations: AllocationsTable;
  decisions: DecisionsTable;
}
