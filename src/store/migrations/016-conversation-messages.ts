import { type Kysely, sql } from 'kysely';
import { atomically } from './atomically.ts';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * The working history (`conversationHistory`, the model's last 50 messages) gets a table of its own, one row per
 * message, instead of being a JSON string inside the flow state's `state_data`. As a value in that map it made the
 * flow-state row ≈ 8–10 kB (JSON inside JSON), and every transaction of a turn that changed any key wrote the whole row
 * again (a leaf and two overflow pages on SQLite, a new jsonb on PostgreSQL): three times a turn. Appending a message
 * now writes one small row; the state row stays small.
 *
 * `seq` numbers a participant's messages from 1 in the order they were appended; the newest 50 are the history, and
 * older rows are deleted in batches (see conversation-history.ts). The rows go with their participant, like the flow
 * state. Existing histories are moved here, oldest message first, and their key removed from `state_data`.
 */
export function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  // All or nothing: a crash halfway must not leave the table created and the histories half moved.
  return atomically(db, (transaction) => migrate(transaction, dialect));
}

async function migrate(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  await dialect
    .clusterByPrimaryKey(
      db.schema
        .createTable('conversation_messages')
        .addColumn('participant_id', 'text', (column) =>
          column.notNull().references('participants.id').onDelete('cascade'),
        )
        .addColumn('seq', 'integer', (column) => column.notNull())
        .addColumn('message', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('conversation_messages_primary_key', ['participant_id', 'seq']),
    )
    .execute();
  await moveStoredHistories(db, dialect);
}

const HISTORY_KEY = 'conversationHistory';

/** What the working history keeps (as `isConversationMessage` in the domain, restated so the migration stays fixed). */
function isMessage(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { role, content } = value as { role?: unknown; content?: unknown };
  return (role === 'user' || role === 'assistant') && typeof content === 'string';
}

/**
 * The messages of a stored `{"messages":[…]}` value, each as its JSON text; none when it is not one. Entries that are
 * not messages were left out whenever the history was read, so they are left behind.
 */
function messagesOf(value: unknown): string[] {
  if (typeof value !== 'string' || value === '') return [];
  try {
    const messages = (JSON.parse(value) as { messages?: unknown })?.messages;
    return Array.isArray(messages) ? messages.filter(isMessage).map((message) => JSON.stringify(message)) : [];
  } catch {
    return [];
  }
}

/** A row's state data: jsonb arrives parsed (PostgreSQL), text does not (SQLite); undefined when unreadable. */
function stateDataOf(value: unknown): Record<string, unknown> | undefined {
  try {
    const data: unknown = typeof value === 'string' ? JSON.parse(value) : value;
    return typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Moves every flow state's `conversationHistory` into `conversation_messages` and removes the key. Exported for its
 * test; run once, by the migration.
 */
export async function moveStoredHistories(db: Kysely<unknown>, dialect: SchemaDialect): Promise<number> {
  const rows = await sql<{ participant_id: string; state_data: unknown }>`
    select participant_id, state_data from flow_states`.execute(db);
  let moved = 0;
  for (const row of rows.rows) {
    const data = stateDataOf(row.state_data);
    if (!data || !(HISTORY_KEY in data)) continue;
    const messages = messagesOf(data[HISTORY_KEY]);
    for (const [index, message] of messages.entries()) {
      await sql`insert into conversation_messages (participant_id, seq, message)
        values (${row.participant_id}, ${index + 1}, ${message})`.execute(db);
    }
    // The key is removed in the database, so nothing else in the row is written back from this copy.
    const withoutHistory =
      dialect.jsonType === 'jsonb'
        ? sql`state_data - ${HISTORY_KEY}::text`
        : sql`json_remove(state_data, ${`$.${HISTORY_KEY}`})`;
    await sql`update flow_states set state_data = ${withoutHistory} where participant_id = ${row.participant_id}`.execute(
      db,
    );
    moved += 1;
  }
  return moved;
}
