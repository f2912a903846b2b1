/** The tables of a randomised trial (migration 040), part of `Database`. */
import type { NullableTimestampColumn, TimestampColumn } from './database.ts';

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

export interface TrialTables {
  allocation_blocks: AllocationBlocksTable;
  allocations: AllocationsTable;
}
