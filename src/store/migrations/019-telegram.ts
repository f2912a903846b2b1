import type { Kysely } from 'kysely';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * The telegram channel. A Telegram chat is known by its chat id, never by a phone number, so a participant is bound
 * to their chat by a one-time start code (the deep link `https://t.me/<bot>?start=<code>`):
 * - `telegram_start_codes`: the SHA-256 of each code (never the code itself: a copy of the database must not let
 *   anyone bind their own chat to a participant), single use (`used_at`), expiring.
 * - `telegram_chats`: which chat is the participant's; one chat per participant and one participant per chat.
 * - `telegram_messages`: what was sent (so a retried delivery is not sent twice) and, for a native poll, Telegram's
 *   poll id with the question and options its `poll_answer` updates are resolved against.
 * Start codes go with their participant. Chats and sent messages have no foreign key: the unregister notice is
 * delivered after its participant is removed, and still has to find the chat.
 */
export async function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  await db.schema
    .createTable('telegram_start_codes')
    .addColumn('code_hash', 'text', (column) => column.primaryKey())
    .addColumn('participant_id', 'text', (column) => column.notNull().references('participants.id').onDelete('cascade'))
    .addColumn('created_at', dialect.timestampType, (column) => column.notNull())
    .addColumn('expires_at', dialect.timestampType, (column) => column.notNull())
    .addColumn('used_at', dialect.timestampType)
    .execute();
  await db.schema
    .createIndex('telegram_start_codes_participant_id_index')
    .on('telegram_start_codes')
    .column('participant_id')
    .execute();

  await db.schema
    .createTable('telegram_chats')
    .addColumn('participant_id', 'text', (column) => column.primaryKey())
    .addColumn('chat_id', 'text', (column) => column.notNull().unique())
    .addColumn('linked_at', dialect.timestampType, (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('telegram_messages')
    .addColumn('outbound_id', 'text', (column) => column.primaryKey())
    .addColumn('participant_id', 'text', (column) => column.notNull())
    .addColumn('chat_id', 'text', (column) => column.notNull())
    .addColumn('message_id', 'text', (column) => column.notNull())
    .addColumn('poll_id', 'text', (column) => column.unique())
    .addColumn('poll', dialect.jsonType)
    .addColumn('created_at', dialect.timestampType, (column) => column.notNull())
    .execute();
}
