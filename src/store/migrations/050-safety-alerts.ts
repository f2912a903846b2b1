import type { Kysely } from 'kysely';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * Staff alerts, their deliveries per route, and participants under staff review (store/safety-records.ts). An alert
 * outlives its participant's deletion only as long as the participant does: the rows name a person's crisis and go
 * with them. `source_message_id` is unique so that a message processed twice (a crash between detection and the
 * commit of its outcome, or another instance) raises one alert.
 */
export async function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  await db.schema
    .createTable('alerts')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('participant_id', 'text', (column) => column.references('participants.id').onDelete('cascade'))
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('detector', 'text', (column) => column.notNull())
    .addColumn('rule', 'text')
    .addColumn('score', 'real')
    .addColumn('urgency', 'text', (column) => column.notNull())
    .addColumn('reason', 'text', (column) => column.notNull())
    .addColumn('source_message_id', 'text', (column) => column.unique())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('created_at', dialect.timestampType, (column) => column.notNull())
    .addColumn('acknowledged_at', dialect.timestampType)
    .addColumn('acknowledged_by', 'text')
    .addColumn('acknowledge_note', 'text')
    .addColumn('resolved_at', dialect.timestampType)
    .addColumn('resolved_by', 'text')
    .addColumn('resolve_note', 'text')
    .execute();
  await db.schema.createIndex('alerts_by_status').on('alerts').columns(['status', 'created_at']).execute();
  await db.schema.createIndex('alerts_by_participant').on('alerts').columns(['participant_id', 'kind']).execute();
  await db.schema
    .createTable('alert_deliveries')
    .addColumn('alert_id', 'text', (column) => column.notNull().references('alerts.id').onDelete('cascade'))
    .addColumn('route', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', dialect.timestampType)
    .addPrimaryKeyConstraint('alert_deliveries_pk', ['alert_id', 'route'])
    .execute();
  await db.schema
    .createTable('safety_reviews')
    .addColumn('participant_id', 'text', (column) =>
      column.primaryKey().references('participants.id').onDelete('cascade'),
    )
    .addColumn('alert_id', 'text', (column) => column.notNull())
    .addColumn('started_at', dialect.timestampType, (column) => column.notNull())
    .execute();
}
