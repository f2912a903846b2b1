import type { Kysely } from 'kysely';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * Micro-randomised decisions: the primary key is the decision point's moment itself (study, participant, decision
 * point, local date, slot), so an insert is what decides it, and a second one (a retried job, another instance, a
 * restart after SIGKILL) does nothing. No foreign key: decisions are study data that outlive a participant.
 */
export async function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  await db.schema
    .createTable('decisions')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('participant_id', 'text', (column) => column.notNull())
    .addColumn('study_id', 'text', (column) => column.notNull())
    .addColumn('arm_id', 'text', (column) => column.notNull())
    .addColumn('decision_point_id', 'text', (column) => column.notNull())
    .addColumn('local_date', 'text', (column) => column.notNull())
    .addColumn('slot', 'integer', (column) => column.notNull())
    .addColumn('intended_at', dialect.timestampType, (column) => column.notNull())
    .addColumn('intended_local', 'text', (column) => column.notNull())
    .addColumn('available', 'integer', (column) => column.notNull())
    .addColumn('unavailable_reason', 'text')
    .addColumn('probabilities', dialect.jsonType, (column) => column.notNull())
    .addColumn('option', 'text')
    .addColumn('draw', 'double precision')
    .addColumn('design_hash', 'text', (column) => column.notNull())
    .addColumn('decided_at', dialect.timestampType, (column) => column.notNull())
    .addColumn('sent_outbound_id', 'text')
    .addColumn('sent_at', dialect.timestampType)
    .addColumn('outcome', dialect.jsonType)
    .addColumn('outcome_at', dialect.timestampType)
    .execute();
  await db.schema
    .createIndex('decisions_participant')
    .on('decisions')
    .columns(['participant_id', 'intended_at'])
    .execute();
}
