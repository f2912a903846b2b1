import type { Kysely, Selectable } from 'kysely';
import type {
  NewTranscriptEntry,
  TranscriptEntry,
  TranscriptRepository,
  TranscriptToolCall,
} from '../ports/conversation-store.ts';
import { fromOptionalJson, fromTimestamp, optionalField, toOptionalJson, toTimestamp } from './column-codecs.ts';
import type { Database, TranscriptTable } from './database.ts';
import { inTransaction } from './in-transaction.ts';
import { literalLimit } from './literal-limit.ts';
import {
  insertTranscriptRow,
  latestTranscriptRows,
  type NewTranscriptRow,
  transcriptRowsAfterLastMessage,
  transcriptRowsForSourceMessage,
} from './sql/transcript-entries.ts';
import { projectTranscript } from './study-day-projection.ts';

/** How many newest entries `afterLastMessage` reads before it looks for the participant's latest message. */
const AFTER_LAST_MESSAGE_PROBE = 4;

export function createTranscriptRepository(db: Kysely<Database>): TranscriptRepository {
  /**
   * In a transaction: the entries it appended, by participant, oldest first. They are the participant's newest (the
   * participant lock keeps any other writer of their transcript out), so a look at the newest few that this
   * transaction wrote itself needs no query: a daily prompt's polls ask what was sent just before them.
   */
  const appended = db.isTransaction ? new Map<string, TranscriptEntry[]>() : undefined;
  function remember(entry: TranscriptEntry): void {
    if (!appended) return;
    const entries = appended.get(entry.participantId);
    if (entries) entries.push(entry);
    else appended.set(entry.participantId, [entry]);
  }

  return {
    append(entries) {
      // One insert per entry: neither database promises that a multi-row RETURNING comes back in VALUES order, and
      // the ids must match the entries they were given for. The transaction keeps a turn's entries together.
      return inTransaction(db, async (transaction) => {
        const stored: TranscriptEntry[] = [];
        for (const entry of entries) {
          const row = await insertTranscriptRow(transaction, toTranscriptRow(entry));
          // A participant's message answers their latest daily prompt: the dashboard's summary, in this transaction.
          await projectTranscript(transaction, entry);
          const written = toTranscriptEntry(row);
          remember({ ...written });
          stored.push(written);
        }
        return stored;
      });
    },

    async list(participantId, options = {}) {
      if (options.before === undefined && options.limit !== undefined) {
        const written = appended?.get(participantId);
        if (written && written.length >= options.limit) {
          return written.slice(written.length - options.limit).map((entry) => ({ ...entry }));
        }
        const rows = await latestTranscriptRows(db, participantId, options.limit);
        return rows.reverse().map(toTranscriptEntry);
      }
      let query = db.selectFrom('transcript').selectAll().where('participant_id', '=', participantId);
      if (options.before !== undefined) query = query.where('id', '<', options.before);
      if (options.limit === undefined) {
        const rows = await query.orderBy('id', 'asc').execute();
        return rows.map(toTranscriptEntry);
      }
      // The newest `limit` entries before the cursor, then back to oldest first: the page a chat view scrolls up to.
      const rows = await query.orderBy('id', 'desc').limit(literalLimit(options.limit)).execute();
      return rows.reverse().map(toTranscriptEntry);
    },

    async afterLastMessage(participantId, options) {
      // Most often the participant's message is a few entries back (a turn's tool call, its result and the reply; a
      // prompt and its polls), so the newest few entries are read first, in one pass down the participant's index;
      // the query that finds their latest message first is needed only when they are not among them.
      const probe = Math.min(options.limit + 1, AFTER_LAST_MESSAGE_PROBE);
      const newest = await latestTranscriptRows(db, participantId, probe);
      const lastMessage = newest.findIndex((row) => row.role === 'user');
      if (lastMessage >= 0 || newest.length < probe || probe > options.limit) {
        const after = lastMessage >= 0 ? newest.slice(0, lastMessage) : newest;
        return after.slice(0, options.limit).reverse().map(toTranscriptEntry);
      }
      const rows = await transcriptRowsAfterLastMessage(db, participantId, options.limit);
      return rows.reverse().map(toTranscriptEntry);
    },

    async forSourceMessage(participantId, sourceMessageId) {
      const rows = await transcriptRowsForSourceMessage(db, participantId, sourceMessageId);
      return rows.map(toTranscriptEntry);
    },

    async purge(participantId) {
      appended?.delete(participantId);
      const result = await db.deleteFrom('transcript').where('participant_id', '=', participantId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

function toTranscriptRow(entry: NewTranscriptEntry): NewTranscriptRow {
  return {
    participant_id: entry.participantId,
    role: entry.role,
    kind: entry.kind,
    content: entry.content,
    tool_calls: toOptionalJson(entry.toolCalls),
    tool_call_id: entry.toolCallId ?? null,
    tool_name: entry.toolName ?? null,
    module: entry.module ?? null,
    model: entry.model ?? null,
    source_message_id: entry.sourceMessageId ?? null,
    outbound_id: entry.outboundId ?? null,
    llm_call_id: entry.llmCallId ?? null,
    created_at: toTimestamp(entry.createdAt),
  };
}

export function toTranscriptEntry(row: Selectable<TranscriptTable>): TranscriptEntry {
  return {
    id: Number(row.id),
    participantId: row.participant_id,
    role: row.role as TranscriptEntry['role'],
    kind: row.kind as TranscriptEntry['kind'],
    content: row.content,
    ...optionalField('toolCalls', fromOptionalJson<TranscriptToolCall[]>(row.tool_calls)),
    ...optionalField('toolCallId', row.tool_call_id),
    ...optionalField('toolName', row.tool_name),
    ...optionalField('module', row.module),
    ...optionalField('model', row.model),
    ...optionalField('sourceMessageId', row.source_message_id),
    ...optionalField('outboundId', row.outbound_id),
    ...optionalField('llmCallId', row.llm_call_id === null ? null : Number(row.llm_call_id)),
    createdAt: fromTimestamp(row.created_at),
  };
}
