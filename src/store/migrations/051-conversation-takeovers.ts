import type { Kysely } from 'kysely';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * Conversations taken over by staff (store/safety-records.ts), one row while it lasts: the primary key makes taking
 * over a single insert that one staff member wins. The row goes with its participant.
 */
export async function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  await db.schema
    .createTable('conversation_takeovers')
    .addColumn('participant_id', 'text', (column) =>
      column.primaryKey().references('participants.id').onDelete('cascade'),
    )
    .addColumn('taken_by', 'text', (column) => column.notNull())
    .addColumn('started_at', dialect.timestampType, (column) => column.notNull())
    .addColumn('timers', 'text', (column) => column.notNull())
    .addColumn('last_staff_message_at', dialect.timestampType, (column) => column.notNull())
    .execute();
}
