/** The working history a turn hands the model: its newest messages read, the turn's new ones appended, old ones cut. */
import type { Kysely } from 'kysely';
import type { Database } from '../database.ts';
import { hotStatement, runHot } from './hot-statement.ts';

export const latestConversationMessages = hotStatement(
  'conversation_latest',
  `select seq, message from conversation_messages where participant_id = $1 order by seq desc limit $2`,
);

export const insertConversationMessage = hotStatement(
  'conversation_insert',
  `insert into conversation_messages (participant_id, seq, message) values ($1, $2, $3)`,
);

export const deleteConversationMessagesBefore = hotStatement(
  'conversation_delete_before',
  `delete from conversation_messages where participant_id = $1 and seq < $2`,
);

export interface ConversationMessageRow {
  seq: number;
  message: string;
}

/** The newest `limit` messages, newest first. */
export async function latestConversationRows(
  db: Kysely<Database>,
  participantId: string,
  limit: number,
): Promise<ConversationMessageRow[]> {
  return (await runHot<ConversationMessageRow>(db, latestConversationMessages, [participantId, limit])).rows;
}

export async function insertConversationRow(
  db: Kysely<Database>,
  participantId: string,
  seq: number,
  message: string,
): Promise<void> {
  await runHot(db, insertConversationMessage, [participantId, seq, message]);
}

export async function deleteConversationRowsBefore(
  db: Kysely<Database>,
  participantId: string,
  seq: number,
): Promise<number> {
  const result = await runHot(db, deleteConversationMessagesBefore, [participantId, seq]);
  return Number(result.numAffectedRows ?? 0);
}
