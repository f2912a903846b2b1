/**
 * The transcript on the hot path: a turn's entries appended one by one (neither database promises that a multi-row
 * RETURNING comes back in VALUES order), a participant's newest entries (the recent history a turn and the poll
 * numbering read), the entries after their latest message, and the rows that record one inbound message.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database, TranscriptTable } from '../database.ts';
import { hotStatement, runHot } from './hot-statement.ts';

export type TranscriptRow = Selectable<TranscriptTable>;
export type NewTranscriptRow = Omit<TranscriptRow, 'id'>;

export const insertTranscriptEntry = hotStatement(
  'transcript_insert',
  `insert into transcript (participant_id, role, kind, content, tool_calls, tool_call_id, tool_name, module, model,
     source_message_id, outbound_id, llm_call_id, created_at)
   values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
   returning *`,
);

/** A participant's newest entries, newest first, down the `(participant_id, id)` index. */
export const latestTranscriptEntries = hotStatement(
  'transcript_latest',
  `select * from transcript where participant_id = $1 order by id desc limit $2`,
);

/**
 * The entries after the participant's latest message, newest first. The role is a literal, like every transcript
 * query's: the partial index of migration 012 is restricted on it.
 */
export const transcriptAfterLastMessage = hotStatement(
  'transcript_after_last_message',
  `select * from transcript
   where participant_id = $1
     and id > coalesce((select message.id from transcript as message
                        where message.participant_id = $1 and message.role = 'user'
                        order by message.id desc limit 1), 0)
   order by id desc limit $2`,
);

/**
 * The participant's message and the reply recorded for one inbound message: the predicate repeats the partial
 * index's (`TURN_ANCHOR_ROWS` of migration 012) verbatim, so that SQLite uses it.
 */
export const transcriptForSourceMessage = hotStatement(
  'transcript_for_source_message',
  `select * from transcript
   where source_message_id = $2 and (role = 'user' or kind = 'reply') and participant_id = $1
   order by id asc`,
);

export async function insertTranscriptRow(db: Kysely<Database>, row: NewTranscriptRow): Promise<TranscriptRow> {
  const { rows } = await runHot<TranscriptRow>(db, insertTranscriptEntry, [
    row.participant_id,
    row.role,
    row.kind,
    row.content,
    row.tool_calls,
    row.tool_call_id,
    row.tool_name,
    row.module,
    row.model,
    row.source_message_id,
    row.outbound_id,
    row.llm_call_id,
    row.created_at,
  ]);
  const [inserted] = rows;
  if (inserted === undefined) throw new Error('the transcript insert returned no row');
  return inserted;
}

export async function latestTranscriptRows(
  db: Kysely<Database>,
  participantId: string,
  limit: number,
): Promise<TranscriptRow[]> {
  return (await runHot<TranscriptRow>(db, latestTranscriptEntries, [participantId, limit])).rows;
}

export async function transcriptRowsAfterLastMessage(
  db: Kysely<Database>,
  participantId: string,
  limit: number,
): Promise<TranscriptRow[]> {
  return (await runHot<TranscriptRow>(db, transcriptAfterLastMessage, [participantId, limit])).rows;
}

export async function transcriptRowsForSourceMessage(
  db: Kysely<Database>,
  participantId: string,
  sourceMessageId: string,
): Promise<TranscriptRow[]> {
  return (await runHot<TranscriptRow>(db, transcriptForSourceMessage, [participantId, sourceMessageId])).rows;
}
