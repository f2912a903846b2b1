import type { Kysely, Selectable } from 'kysely';
import { AppError } from '../../domain/errors.ts';
import type { Allocation, AllocationRepository } from '../allocations.ts';
import { fromTimestamp, toTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';
import type { StoreDialect } from './store-dialect.ts';
import type { AllocationsTable } from './trial-tables.ts';

function toAllocation(row: Selectable<AllocationsTable>): Allocation {
  return {
    participantId: row.participant_id,
    studyId: row.study_id,
    armId: row.arm_id,
    allocatedArmId: row.allocated_arm_id,
    stratum: row.stratum,
    method: row.method,
    blockIndex: row.block_index === null ? null : Number(row.block_index),
    blockSize: row.block_size === null ? null : Number(row.block_size),
    blockPosition: row.block_position === null ? null : Number(row.block_position),
    stratumSequence: Number(row.stratum_sequence),
    draw: row.draw === null ? null : Number(row.draw),
    designHash: row.design_hash,
    allocatedAt: fromTimestamp(row.allocated_at),
    override:
      row.overridden_at === null
        ? null
        : { at: fromTimestamp(row.overridden_at), by: row.overridden_by ?? '', reason: row.override_reason ?? '' },
  };
}

export function createAllocationRepository(db: Kysely<Database>, dialect: StoreDialect): AllocationRepository {
  return {
    async lockBlockState(studyId, stratum) {
      // Insert-if-missing first, so there is always a row to lock: on PostgreSQL a concurrent insert of the same key
      // waits for the other transaction and then does nothing, and the locking read below waits for its commit.
      await db
        .insertInto('allocation_blocks')
        .values({ study_id: studyId, stratum, block_index: -1, block_size: 0, position: 0, allocated: 0 })
        .onConflict((conflict) => conflict.columns(['study_id', 'stratum']).doNothing())
        .execute();
      const query = db
        .selectFrom('allocation_blocks')
        .select(['block_index', 'block_size', 'position', 'allocated'])
        .where('study_id', '=', studyId)
        .where('stratum', '=', stratum);
      // SQLite has one writer (and one process per state directory), so its transaction already excludes others.
      const row = await (dialect.name === 'postgres' ? query.forUpdate() : query).executeTakeFirstOrThrow();
      return {
        blockIndex: Number(row.block_index),
        blockSize: Number(row.block_size),
        position: Number(row.position),
        allocated: Number(row.allocated),
      };
    },

    async saveBlockState(studyId, stratum, state) {
      await db
        .updateTable('allocation_blocks')
        .set({
          block_index: state.blockIndex,
          block_size: state.blockSize,
          position: state.position,
          allocated: state.allocated,
        })
        .where('study_id', '=', studyId)
        .where('stratum', '=', stratum)
        .execute();
    },

    async record(allocation) {
      const inserted = await db
        .insertInto('allocations')
        .values({
          participant_id: allocation.participantId,
          study_id: allocation.studyId,
          arm_id: allocation.armId,
          allocated_arm_id: allocation.allocatedArmId,
          stratum: allocation.stratum,
          method: allocation.method,
          block_index: allocation.blockIndex,
          block_size: allocation.blockSize,
          block_position: allocation.blockPosition,
          stratum_sequence: allocation.stratumSequence,
          draw: allocation.draw,
          design_hash: allocation.designHash,
          allocated_at: toTimestamp(allocation.allocatedAt),
          overridden_at: null,
          overridden_by: null,
          override_reason: null,
        })
        .onConflict((conflict) => conflict.column('participant_id').doNothing())
        .returning('participant_id')
        .executeTakeFirst();
      if (!inserted) throw new AppError('conflict', `participant ${allocation.participantId} is already allocated`);
    },

    async get(participantId) {
      const row = await db
        .selectFrom('allocations')
        .selectAll()
        .where('participant_id', '=', participantId)
        .executeTakeFirst();
      return row && toAllocation(row);
    },

    async list(studyId) {
      const rows = await db
        .selectFrom('allocations')
        .selectAll()
        .where('study_id', '=', studyId)
        .orderBy('allocated_at')
        .orderBy('stratum')
        .orderBy('stratum_sequence')
        .execute();
      return rows.map(toAllocation);
    },

    async page(after, limit) {
      let query = db.selectFrom('allocations').selectAll().orderBy('participant_id').limit(limit);
      if (after !== undefined) query = query.where('participant_id', '>', after);
      return (await query.execute()).map(toAllocation);
    },

    async armsOf(participantIds) {
      if (participantIds.length === 0) return new Map();
      const rows = await db
        .selectFrom('allocations')
        .select(['participant_id', 'arm_id'])
        .where('participant_id', 'in', [...participantIds])
        .execute();
      return new Map(rows.map((row) => [row.participant_id, row.arm_id]));
    },

    async armsByParticipant(studyId) {
      const rows = await db
        .selectFrom('allocations')
        .select(['participant_id', 'arm_id'])
        .where('study_id', '=', studyId)
        .execute();
      return new Map(rows.map((row) => [row.participant_id, row.arm_id]));
    },

    async blockStates(studyId) {
      const rows = await db
        .selectFrom('allocation_blocks')
        .selectAll()
        .where('study_id', '=', studyId)
        .orderBy('stratum')
        .execute();
      return rows.map((row) => ({
        studyId: row.study_id,
        stratum: row.stratum,
        blockIndex: Number(row.block_index),
        blockSize: Number(row.block_size),
        position: Number(row.position),
        allocated: Number(row.allocated),
      }));
    },

    async override(participantId, change) {
      const row = await db
        .updateTable('allocations')
        .set({
          arm_id: change.armId,
          overridden_at: toTimestamp(change.at),
          overridden_by: change.by,
          override_reason: change.reason,
        })
        .where('participant_id', '=', participantId)
        .returningAll()
        .executeTakeFirst();
      return row && toAllocation(row);
    },
  };
}
