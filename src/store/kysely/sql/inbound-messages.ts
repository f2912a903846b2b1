/**
 * Inbound messages on the hot path: stored on arrival (once, whatever the retries), the participant's oldest
 * unprocessed one taken, and marked done. `received` is a literal in the text: the look-ups of unprocessed messages
 * walk partial indexes of received messages only (migration 015).
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database, InboundMessagesTable } from '../database.ts';
import { hotStatement, runHot } from './hot-statement.ts';

export type InboundMessageRow = Selectable<InboundMessagesTable>;
export type NewInboundMessageRow = Omit<InboundMessageRow, 'arrival_order'>;

const COLUMNS = `id, channel, participant_id, provider_message_id, from_phone, text, poll_answer, status, received_at,
  processed_at, last_error`;

/** The new message's row, or none when its id or provider id is already stored. */
export const insertInboundMessage = hotStatement(
  'inbound_insert',
  `insert into inbound_messages (${COLUMNS})
   values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
   on conflict do nothing
   returning *`,
  // SQLite numbers the message inside the insert, as it numbers jobs (see the job insert in enqueue-job.ts).
  `insert into inbound_messages (${COLUMNS}, arrival_order)
   values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
     (select coalesce(max(rowid), 0) + 1 from inbound_messages))
   on conflict do nothing
   returning *`,
);

export const nextUnprocessedInbound = hotStatement(
  'inbound_next_unprocessed',
  `select * from inbound_messages where participant_id = $1 and status = 'received' order by arrival_order limit 1`,
);

export const markInboundDone = hotStatement(
  'inbound_mark_done',
  `update inbound_messages set status = $2, processed_at = $3, last_error = $4 where id = $1`,
);

export async function insertInboundRow(
  db: Kysely<Database>,
  row: NewInboundMessageRow,
): Promise<InboundMessageRow | undefined> {
  const { rows } = await runHot<InboundMessageRow>(db, insertInboundMessage, [
    row.id,
    row.channel,
    row.participant_id,
    row.provider_message_id,
    row.from_phone,
    row.text,
    row.poll_answer,
    row.status,
    row.received_at,
    row.processed_at,
    row.last_error,
  ]);
  return rows[0];
}

export async function nextUnprocessedInboundRow(
  db: Kysely<Database>,
  participantId: string,
): Promise<InboundMessageRow | undefined> {
  return (await runHot<InboundMessageRow>(db, nextUnprocessedInbound, [participantId])).rows[0];
}

export async function markInboundRowDone(
  db: Kysely<Database>,
  id: string,
  status: 'processed' | 'failed',
  processedAt: string,
  lastError: string | null,
): Promise<void> {
  await runHot(db, markInboundDone, [id, status, processedAt, lastError]);
}
