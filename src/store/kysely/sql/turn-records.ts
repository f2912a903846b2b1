/**
 * The records a turn or a daily prompt writes beside its messages: the audit event, the model call's provenance, the
 * channel's delivery receipt; the participant read that starts each; the outage a successful turn ends; and the
 * study day a participant's message or a poll answer updates in the dashboard's summary.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database, DeliveriesTable, ParticipantDaysTable, ParticipantsTable } from '../database.ts';
import { hotStatement, runHot } from './hot-statement.ts';

export const participantById = hotStatement('participant_by_id', `select * from participants where id = $1`);

export const insertEvent = hotStatement(
  'event_insert',
  `insert into events (participant_id, type, data, source_message_id, created_at) values ($1, $2, $3, $4, $5)`,
);

export const insertLlmCall = hotStatement(
  'llm_call_insert',
  `insert into llm_calls (participant_id, purpose, model, provider_host, temperature, prompt_file, prompt_version,
     prompt_tokens, completion_tokens, total_tokens, latency_ms, outcome, error, created_at)
   values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
   returning id`,
);

export const insertDelivery = hotStatement(
  'delivery_insert',
  `insert into deliveries (outbound_id, participant_id, channel, provider_message_id, status, error_code,
     error_message, created_at)
   values ($1, $2, $3, $4, $5, $6, $7, $8)
   returning *`,
);

/** Every answered turn ends the participant's outage, if any, in its reply's transaction. */
export const endLlmOutage = hotStatement('llm_outage_end', `delete from llm_outages where participant_id = $1`);

/** The participant's latest study day whose prompt was sent at or before `$2`. */
export const latestStudyDay = hotStatement(
  'study_day_latest',
  `select local_date, prompt_sent_at, first_reply_at, done from participant_days
   where participant_id = $1 and prompt_sent_at <= $2
   order by local_date desc limit 1`,
);

export type ParticipantRow = Selectable<ParticipantsTable>;
export type DeliveryRow = Selectable<DeliveriesTable>;

export async function participantRow(db: Kysely<Database>, id: string): Promise<ParticipantRow | undefined> {
  return (await runHot<ParticipantRow>(db, participantById, [id])).rows[0];
}

export async function insertEventRow(
  db: Kysely<Database>,
  row: {
    participant_id: string | null;
    type: string;
    data: string;
    source_message_id: string | null;
    created_at: string;
  },
): Promise<void> {
  await runHot(db, insertEvent, [row.participant_id, row.type, row.data, row.source_message_id, row.created_at]);
}

export async function insertLlmCallRow(db: Kysely<Database>, values: readonly unknown[]): Promise<number> {
  const [row] = (await runHot<{ id: number | string }>(db, insertLlmCall, values)).rows;
  if (row === undefined) throw new Error('the model call insert returned no row');
  return Number(row.id);
}

export async function insertDeliveryRow(db: Kysely<Database>, values: readonly unknown[]): Promise<DeliveryRow> {
  const [row] = (await runHot<DeliveryRow>(db, insertDelivery, values)).rows;
  if (row === undefined) throw new Error('the delivery insert returned no row');
  return row;
}

export async function endLlmOutageRow(db: Kysely<Database>, participantId: string): Promise<boolean> {
  const result = await runHot(db, endLlmOutage, [participantId]);
  return Number(result.numAffectedRows ?? 0) > 0;
}

export type StudyDayRow = Pick<
  Selectable<ParticipantDaysTable>,
  'local_date' | 'prompt_sent_at' | 'first_reply_at' | 'done'
>;

export async function latestStudyDayRow(
  db: Kysely<Database>,
  participantId: string,
  at: string,
): Promise<StudyDayRow | undefined> {
  return (await runHot<StudyDayRow>(db, latestStudyDay, [participantId, at])).rows[0];
}
