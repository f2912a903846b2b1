import type { Kysely } from 'kysely';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * A randomised trial's allocations. `allocations` has one row per participant (the primary key makes a second
 * allocation impossible) and no foreign key: it is study data that outlives an unregistered participant, like the
 * transcript. `allocation_blocks` has one row per (study, stratum): the sequence's position, updated under a row lock
 * in the enrollment's transaction, so two enrollments of one stratum (two instances at the same moment) take two
 * different positions of the same block.
 */
export async function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  await db.schema
    .createTable('allocation_blocks')
    .addColumn('study_id', 'text', (column) => column.notNull())
    .addColumn('stratum', 'text', (column) => column.notNull())
    .addColumn('block_index', 'integer', (column) => column.notNull())
    .addColumn('block_size', 'integer', (column) => column.notNull())
    .addColumn('position', 'integer', (column) => column.notNull())
    .addColumn('allocated', 'integer', (column) => column.notNull())
    .addPrimaryKeyConstraint('allocation_blocks_pk', ['study_id', 'stratum'])
    .execute();
  await db.schema
    .createTable('allocations')
    .addColumn('participant_id', 'text', (column) => column.primaryKey())
    .addColumn('study_id', 'text', (column) => column.notNull())
    .addColumn('arm_id', 'text', (column) => column.notNull())
    .addColumn('allocated_arm_id', 'text', (column) => column.notNull())
    .addColumn('stratum', 'text', (column) => column.notNull())
    .addColumn('method', 'text', (column) => column.notNull())
    .addColumn('block_index', 'integer')
    .addColumn('block_size', 'integer')
    .addColumn('block_position', 'integer')
    .addColumn('stratum_sequence', 'integer', (column) => column.notNull())
    .addColumn('draw', 'double precision')
    .addColumn('design_hash', 'text', (column) => column.notNull())
    .addColumn('allocated_at', dialect.timestampType, (column) => column.notNull())
    .addColumn('overridden_at', dialect.timestampType)
    .addColumn('overridden_by', 'text')
    .addColumn('override_reason', 'text')
    .execute();
  await db.schema
    .createIndex('allocations_study_order')
    .on('allocations')
    .columns(['study_id', 'allocated_at'])
    .execute();
}
