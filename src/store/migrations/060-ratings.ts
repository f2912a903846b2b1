import type { Kysely } from 'kysely';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * Human ratings of conversations (store/ratings-records.ts). A study participant's ratings go with the participant
 * (cascade); an evaluation run's conversations have no participant row, so the key (`conversation`) names them.
 */
export async function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  await db.schema
    .createTable('ratings')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('conversation', 'text', (column) => column.notNull())
    .addColumn('participant_id', 'text', (column) => column.references('participants.id').onDelete('cascade'))
    .addColumn('transcript_entry_id', 'bigint')
    .addColumn('rubric', 'text', (column) => column.notNull())
    .addColumn('criterion', 'text', (column) => column.notNull())
    .addColumn('score', 'integer', (column) => column.notNull())
    .addColumn('rater', 'text', (column) => column.notNull())
    .addColumn('comment', 'text')
    .addColumn('created_at', dialect.timestampType, (column) => column.notNull())
    .execute();
  await db.schema
    .createIndex('ratings_by_conversation')
    .on('ratings')
    .columns(['conversation', 'created_at'])
    .execute();
  await db.schema.createIndex('ratings_by_participant').on('ratings').column('participant_id').execute();
}
