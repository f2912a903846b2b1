import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { AppError } from '../../domain/errors.ts';
import type { Participant, ParticipantStatus } from '../../domain/participant.ts';
import type { ParticipantRepository } from '../ports/conversation-store.ts';
import { fromTimestamp, toTimestamp } from './column-codecs.ts';
import type { Database, ParticipantsTable } from './database.ts';
import { inTransaction } from './in-transaction.ts';
import { participantRow } from './sql/turn-records.ts';

export function createParticipantRepository(db: Kysely<Database>): ParticipantRepository {
  function selectParticipants(filter: { status?: ParticipantStatus } = {}) {
    let query = db.selectFrom('participants');
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    return query;
  }

  return {
    async create(participant) {
      await inTransaction(db, async (transaction) => {
        // ON CONFLICT DO NOTHING instead of catching the unique violation: on PostgreSQL a failed statement aborts the
        // surrounding transaction, and the caller may want to carry on after a conflict.
        const result = await transaction
          .insertInto('participants')
          .values(toParticipantRow(participant))
          .onConflict((conflict) => conflict.doNothing())
          .executeTakeFirst();
        if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) {
          throw new AppError('conflict', `participant ${participant.id} or phone ${participant.phoneNumber} exists`, {
            details: { id: participant.id, phoneNumber: participant.phoneNumber },
          });
        }
        // Every participant has a row of study-day counts from enrolment: the adherence grid pages through them.
        await transaction.insertInto('participant_adherence').values({ participant_id: participant.id }).execute();
      });
    },

    async get(id) {
      const row = await participantRow(db, id);
      return row && toParticipant(row);
    },

    async getByPhone(phoneNumber) {
      const row = await db
        .selectFrom('participants')
        .selectAll()
        .where('phone_number', '=', phoneNumber)
        .executeTakeFirst();
      return row && toParticipant(row);
    },

    async list(filter) {
      const rows = await selectParticipants(filter)
        .selectAll()
        .orderBy('enrolled_at')
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toParticipant);
    },

    async update(id, patch) {
      const changes: Updateable<ParticipantsTable> = { updated_at: toTimestamp(patch.updatedAt) };
      if (patch.name !== undefined) changes.name = patch.name;
      if (patch.gender !== undefined) changes.gender = patch.gender;
      if (patch.ethnicity !== undefined) changes.ethnicity = patch.ethnicity;
      if (patch.background !== undefined) changes.background = patch.background;
      if (patch.timezone !== undefined) changes.timezone = patch.timezone;
      if (patch.language !== undefined) changes.language = patch.language;
      if (patch.status !== undefined) changes.status = patch.status;
      if (patch.channel !== undefined) changes.channel = patch.channel;
      const row = await db
        .updateTable('participants')
        .set(changes)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row && toParticipant(row);
    },

    async delete(id) {
      const result = await db.deleteFrom('participants').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async count(filter) {
      const row = await selectParticipants(filter)
        .select((expression) => expression.fn.countAll().as('count'))
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },

    async countByChannel() {
      const rows = await db
        .selectFrom('participants')
        .select(['channel', (expression) => expression.fn.countAll().as('count')])
        .where('status', '!=', 'withdrawn' satisfies ParticipantStatus)
        .groupBy('channel')
        .execute();
      return new Map(rows.map((row) => [row.channel, Number(row.count)]));
    },
  };
}

function toParticipantRow(participant: Participant): Insertable<ParticipantsTable> {
  return {
    id: participant.id,
    phone_number: participant.phoneNumber,
    name: participant.name,
    gender: participant.gender,
    ethnicity: participant.ethnicity,
    background: participant.background,
    timezone: participant.timezone,
    ...(participant.language !== undefined ? { language: participant.language } : {}),
    channel: participant.channel,
    status: participant.status,
    enrolled_at: toTimestamp(participant.enrolledAt),
    created_at: toTimestamp(participant.createdAt),
    updated_at: toTimestamp(participant.updatedAt),
  };
}

export function toParticipant(row: Selectable<ParticipantsTable>): Participant {
  return {
    id: row.id,
    phoneNumber: row.phone_number,
    name: row.name,
    gender: row.gender,
    ethnicity: row.ethnicity,
    background: row.background,
    timezone: row.timezone,
    language: row.language,
    channel: row.channel,
    status: row.status as ParticipantStatus,
    enrolledAt: fromTimestamp(row.enrolled_at),
    createdAt: fromTimestamp(row.created_at),
    updatedAt: fromTimestamp(row.updated_at),
  };
}
