/**
 * Keeps the study-day summary (migration 022: `participant_days`, `participant_adherence`,
 * `participant_status_periods`) up to date in the transaction of the event or transcript entry that changes it, so
 * the dashboard reads a few summary rows instead of the whole history. The rules are the migration's backfill rules:
 * - a `prompt-sent` event starts the participant's study day `local_date` (a second prompt on the same date changes
 *   nothing) and counts a prompt sent;
 * - the participant's message (`user` / `message` transcript entry) is the reply to the latest prompt sent at or
 *   before it, if that day has none yet: it counts a prompt answered;
 * - a "Done" (`poll-answered` with `success-counted`) marks that day done (and answered), once;
 * - a `participant-updated` event with `status_to` ends the open inactive period and, unless the new status is
 *   `active`, starts one.
 * Only the event and transcript repositories call it; participants that do not exist (any more) are skipped.
 */
import { type Kysely, sql } from 'kysely';
import type { NewEvent, NewTranscriptEntry } from '../ports/conversation-store.ts';
import { fromTimestamp, toTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';
import { latestStudyDayRow } from './sql/turn-records.ts';

/** Whether the projection has anything to do for this event (the caller then records it in a transaction). */
export function changesStudyDays(event: NewEvent): boolean {
  if (event.participantId === undefined) return false;
  if (event.type === 'prompt-sent') return true;
  if (event.type === 'poll-answered') return event.data['kind'] === 'success-counted';
  return event.type === 'participant-updated' && typeof event.data['status_to'] === 'string';
}

/** Applies a recorded event; `db` is the transaction that recorded it. */
export async function projectEvent(db: Kysely<Database>, event: NewEvent): Promise<void> {
  const participantId = event.participantId;
  if (participantId === undefined) return;
  const at = toTimestamp(event.createdAt);
  if (event.type === 'prompt-sent') {
    const localDate = event.data['local_date'];
    await promptSent(db, participantId, typeof localDate === 'string' && localDate ? localDate : at.slice(0, 10), at);
  } else if (event.type === 'poll-answered' && event.data['kind'] === 'success-counted') {
    await answered(db, participantId, event.createdAt, { done: true });
  } else if (event.type === 'participant-updated' && typeof event.data['status_to'] === 'string') {
    await statusChanged(db, participantId, event.data['status_to'], at);
  }
}

/** Applies appended transcript entries; `db` is the transaction that appended them. */
export async function projectTranscript(db: Kysely<Database>, entry: NewTranscriptEntry): Promise<void> {
  if (entry.role === 'user' && entry.kind === 'message') {
    await answered(db, entry.participantId, entry.createdAt, { done: false });
  }
}

async function promptSent(db: Kysely<Database>, participantId: string, localDate: string, at: string): Promise<void> {
  // The counts' row: made at enrolment, but a participant written by other means gets one here.
  await db
    .insertInto('participant_adherence')
    .columns(['participant_id'])
    .expression(db.selectFrom('participants').select('id').where('id', '=', participantId))
    .onConflict((conflict) => conflict.doNothing())
    .execute();
  const inserted = await db
    .insertInto('participant_days')
    .columns(['participant_id', 'local_date', 'prompt_sent_at'])
    .expression(
      db
        .selectFrom('participant_adherence')
        .select((expression) => [
          'participant_id',
          expression.val(localDate).as('local_date'),
          expression.val(at).as('prompt_sent_at'),
        ])
        .where('participant_id', '=', participantId),
    )
    .onConflict((conflict) => conflict.doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return;
  await db
    .updateTable('participant_adherence')
    .set({
      prompts_sent: sql<number>`prompts_sent + 1`,
      adherence_rank: sql<number>`prompts_done * 1000 / (prompts_sent + 1)`,
    })
    .where('participant_id', '=', participantId)
    .execute();
}

async function answered(
  db: Kysely<Database>,
  participantId: string,
  at: Date,
  answer: { done: boolean },
): Promise<void> {
  const stamp = toTimestamp(at);
  const day = await latestStudyDayRow(db, participantId, stamp);
  if (!day) return;
  const firstReply = day.first_reply_at === null;
  const newlyDone = answer.done && Number(day.done) === 0;
  if (!firstReply && !newlyDone) return;
  const sentAt = fromTimestamp(day.prompt_sent_at).getTime();
  await db
    .updateTable('participant_days')
    .set({
      ...(firstReply ? { first_reply_at: stamp, reply_seconds: Math.round((at.getTime() - sentAt) / 1000) } : {}),
      ...(newlyDone ? { done: 1 } : {}),
    })
    .where('participant_id', '=', participantId)
    .where('local_date', '=', day.local_date)
    .execute();
  await db
    .updateTable('participant_adherence')
    .set({
      ...(firstReply ? { prompts_answered: sql<number>`prompts_answered + 1` } : {}),
      // The day exists, so at least one prompt was sent.
      ...(newlyDone
        ? {
            prompts_done: sql<number>`prompts_done + 1`,
            adherence_rank: sql<number>`(prompts_done + 1) * 1000 / prompts_sent`,
          }
        : {}),
    })
    .where('participant_id', '=', participantId)
    .execute();
}

async function statusChanged(db: Kysely<Database>, participantId: string, status: string, at: string): Promise<void> {
  await db
    .updateTable('participant_status_periods')
    .set({ ended_at: at })
    .where('participant_id', '=', participantId)
    .where('ended_at', 'is', null)
    .execute();
  if (status === 'active') return;
  await db
    .insertInto('participant_status_periods')
    .columns(['participant_id', 'status', 'started_at'])
    .expression(
      db
        .selectFrom('participants')
        .select((expression) => ['id', expression.val(status).as('status'), expression.val(at).as('started_at')])
        .where('id', '=', participantId),
    )
    .onConflict((conflict) => conflict.doNothing())
    .execute();
}
