/**
 * The trial's allocation records (part of the storage port, `store.ts`): one allocation per participant, made once
 * at enrollment, and one block state per (study, stratum), the row whose lock makes allocation exactly once across
 * transactions and instances.
 */

/** A stratum's sequence position (see `trials/allocation-sequence.ts`). */
export interface StoredBlockState {
  blockIndex: number;
  blockSize: number;
  position: number;
  allocated: number;
}

export interface Allocation {
  participantId: string;
  studyId: string;
  /** The arm in force: the allocated one, or the one a staff override set. */
  armId: string;
  /** The arm the randomisation drew; never changes. */
  allocatedArmId: string;
  stratum: string;
  method: string;
  blockIndex: number | null;
  blockSize: number | null;
  blockPosition: number | null;
  /** 1-based enrollment order within the stratum: with the design, what an auditor recomputes the arm from. */
  stratumSequence: number;
  /** The uniform draw of the simple method; null for blocks (the block's permutation decided). */
  draw: number | null;
  designHash: string;
  allocatedAt: Date;
  override: { at: Date; by: string; reason: string } | null;
}

export interface BlockStateRow extends StoredBlockState {
  studyId: string;
  stratum: string;
}

export interface AllocationRepository {
  /**
   * The stratum's block state, locked until the transaction ends (`SELECT … FOR UPDATE` on PostgreSQL; SQLite has
   * one writer). Creates the row on first use. Call inside a transaction only.
   */
  lockBlockState(studyId: string, stratum: string): Promise<StoredBlockState>;
  saveBlockState(studyId: string, stratum: string, state: StoredBlockState): Promise<void>;
  /** Throws `AppError('conflict')` when the participant already has an allocation. */
  record(allocation: Allocation): Promise<void>;
  get(participantId: string): Promise<Allocation | undefined>;
  /** Every allocation of the study, in allocation order. */
  list(studyId: string): Promise<Allocation[]>;
  /** Every allocation of every study, by participant id after `after` (keyset pages, for the export). */
  page(after: string | undefined, limit: number): Promise<Allocation[]>;
  /** The arm in force of each allocated participant of the study. */
  armsByParticipant(studyId: string): Promise<Map<string, string>>;
  /** The arm in force of each of these participants that has an allocation (a roster page's rows). */
  armsOf(participantIds: readonly string[]): Promise<Map<string, string>>;
  blockStates(studyId: string): Promise<BlockStateRow[]>;
  /** Sets the arm in force; returns the updated allocation, or undefined when the participant has none. */
  override(
    participantId: string,
    change: { armId: string; at: Date; by: string; reason: string },
  ): Promise<Allocation | undefined>;
}
