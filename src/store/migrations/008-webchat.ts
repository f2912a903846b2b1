import type { Kysely } from 'kysely';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * Web-chat links: `/chat/<token>` is the participant's only credential. A token is never reused; revoking one sets
 * `revoked_at` and a new row is issued, so the old link stops working at once. No foreign key: deleting a participant
 * revokes their tokens explicitly, and an old row only ever answers "this link no longer works".
 */
export async function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  await db.schema
    .createTable('web_chat_tokens')
    .addColumn('token', 'text', (column) => column.primaryKey())
    .addColumn('participant_id', 'text', (column) => column.notNull())
    .addColumn('created_at', dialect.timestampType, (column) => column.notNull())
    .addColumn('revoked_at', dialect.timestampType)
    .execute();
  await db.schema
    .createIndex('web_chat_tokens_participant_id_index')
    .on('web_chat_tokens')
    .columns(['participant_id', 'revoked_at'])
    .execute();
}
