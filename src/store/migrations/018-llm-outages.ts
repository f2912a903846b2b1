import type { Kysely } from 'kysely';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * A participant's model outage, one row while it lasts: what makes "one notice per outage" hold whoever notices the
 * failure first. The retry job could not mark it: it is claimed (no longer pending) while it waits for the
 * participant's lock, and it is gone once its messages are given up, while the outage only ends when a turn of the
 * participant is answered again. The primary key makes starting one a single insert that only one caller wins, on
 * any number of instances. The row goes with its participant.
 */
export async function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  await db.schema
    .createTable('llm_outages')
    .addColumn('participant_id', 'text', (column) =>
      column.primaryKey().references('participants.id').onDelete('cascade'),
    )
    .addColumn('started_at', dialect.timestampType, (column) => column.notNull())
    .addColumn('source_message_id', 'text')
    .execute();
}
