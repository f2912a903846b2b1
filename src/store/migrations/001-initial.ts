import { type Kysely, sql } from 'kysely';
import type { SchemaDialect } from './schema-dialect.ts';

/** The initial schema. Applied migrations are never edited: change the schema with a new numbered file. */
export async function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  const { timestampType, jsonType } = dialect;

  await db.schema
    .createTable('participants')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('phone_number', 'text', (column) => column.notNull().unique())
    .addColumn('name', 'text', (column) => column.notNull().defaultTo(''))
    .addColumn('gender', 'text', (column) => column.notNull().defaultTo(''))
    .addColumn('ethnicity', 'text', (column) => column.notNull().defaultTo(''))
    .addColumn('background', 'text', (column) => column.notNull().defaultTo(''))
    .addColumn('timezone', 'text', (column) => column.notNull().defaultTo(''))
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('enrolled_at', timestampType, (column) => column.notNull())
    .addColumn('created_at', timestampType, (column) => column.notNull())
    .addColumn('updated_at', timestampType, (column) => column.notNull())
    .execute();

  // A conversation's state means nothing without its participant, so it goes with them.
  await db.schema
    .createTable('flow_states')
    .addColumn('participant_id', 'text', (column) =>
      column.primaryKey().references('participants.id').onDelete('cascade'),
    )
    .addColumn('flow_type', 'text', (column) => column.notNull())
    .addColumn('current_state', 'text', (column) => column.notNull())
    .addColumn('state_data', jsonType, (column) => column.notNull())
    .addColumn('created_at', timestampType, (column) => column.notNull())
    .addColumn('updated_at', timestampType, (column) => column.notNull())
    .execute();

  // participant_id is deliberately not a foreign key: the transcript is study data and outlives a deleted
  // participant; only an explicit purge removes it.
  await dialect
    .addIdentityPrimaryKey(db.schema.createTable('transcript'), 'id')
    .addColumn('participant_id', 'text', (column) => column.notNull())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('content', 'text', (column) => column.notNull())
    .addColumn('tool_calls', jsonType)
    .addColumn('tool_call_id', 'text')
    .addColumn('tool_name', 'text')
    .addColumn('module', 'text')
    .addColumn('model', 'text')
    .addColumn('source_message_id', 'text')
    .addColumn('outbound_id', 'text')
    .addColumn('created_at', timestampType, (column) => column.notNull())
    .execute();
  await db.schema
    .createIndex('transcript_participant_id_index')
    .on('transcript')
    .columns(['participant_id', 'id'])
    .execute();

  // Events, like the transcript, are an audit trail that outlives participants.
  await dialect
    .addIdentityPrimaryKey(db.schema.createTable('events'), 'id')
    .addColumn('participant_id', 'text')
    .addColumn('type', 'text', (column) => column.notNull())
    .addColumn('data', jsonType, (column) => column.notNull())
    .addColumn('source_message_id', 'text')
    .addColumn('created_at', timestampType, (column) => column.notNull())
    .execute();
  await db.schema.createIndex('events_participant_id_index').on('events').columns(['participant_id', 'id']).execute();
  await db.schema.createIndex('events_type_index').on('events').columns(['type', 'id']).execute();

  // Jobs keep their participant id without a foreign key: finished jobs are the record of what was sent.
  await dialect
    .addInsertionOrderColumn(
      db.schema.createTable('jobs').addColumn('id', 'text', (column) => column.primaryKey()),
      'enqueue_order',
    )
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('participant_id', 'text')
    .addColumn('run_at', timestampType, (column) => column.notNull())
    .addColumn('payload', jsonType, (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (column) => column.notNull().defaultTo(3))
    .addColumn('last_error', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', timestampType)
    .addColumn('dedup_key', 'text')
    .addColumn('created_at', timestampType, (column) => column.notNull())
    .addColumn('updated_at', timestampType, (column) => column.notNull())
    .execute();
  // The dedup key names "the" pending job of its kind (the next reminder of a participant…); finished and cancelled
  // jobs keep their key as history, so uniqueness holds among pending jobs only.
  await db.schema
    .createIndex('jobs_pending_dedup_key_index')
    .on('jobs')
    .column('dedup_key')
    .unique()
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await db.schema.createIndex('jobs_status_run_at_index').on('jobs').columns(['status', 'run_at']).execute();
  await db.schema.createIndex('jobs_participant_id_index').on('jobs').columns(['participant_id', 'status']).execute();

  await db.schema
    .createTable('inbound_messages')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('channel', 'text', (column) => column.notNull())
    .addColumn('participant_id', 'text', (column) => column.notNull())
    .addColumn('provider_message_id', 'text')
    .addColumn('from_phone', 'text', (column) => column.notNull())
    .addColumn('text', 'text', (column) => column.notNull())
    .addColumn('poll_answer', jsonType)
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('received_at', timestampType, (column) => column.notNull())
    .addColumn('processed_at', timestampType)
    .addColumn('last_error', 'text')
    .execute();
  // Providers redeliver webhooks; their message id makes the redelivery recognisable. Messages without one (the
  // console channel) are never deduplicated.
  await db.schema
    .createIndex('inbound_messages_provider_message_index')
    .on('inbound_messages')
    .columns(['channel', 'provider_message_id'])
    .unique()
    .where(sql.ref('provider_message_id'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('inbound_messages_status_index')
    .on('inbound_messages')
    .columns(['status', 'received_at'])
    .execute();
}
