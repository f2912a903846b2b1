import type { Kysely, Selectable } from 'kysely';
import type { Decision, DecisionRepository } from '../decisions.ts';
import { fromJson, fromOptionalJson, fromTimestamp, toJson, toTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';
import type { DecisionsTable } from './trial-tables.ts';

function toDecision(row: Selectable<DecisionsTable>): Decision {
  return {
    id: row.id,
    participantId: row.participant_id,
    studyId: row.study_id,
    armId: row.arm_id,
    decisionPointId: row.decision_point_id,
    localDate: row.local_date,
    slot: Number(row.slot),
    intendedAt: fromTimestamp(row.intended_at),
    intendedLocal: row.intended_local,
    available: Number(row.available) === 1,
    unavailableReason: row.unavailable_reason,
    probabilities: fromJson<Record<string, number>>(row.probabilities),
    option: row.option,
    draw: row.draw === null ? null : Number(row.draw),
    designHash: row.design_hash,
    decidedAt: fromTimestamp(row.decided_at),
    sentOutboundId: row.sent_outbound_id,
    sentAt: row.sent_at === null ? null : fromTimestamp(row.sent_at),
    outcome: fromOptionalJson<Record<string, unknown>>(row.outcome) ?? null,
    outcomeAt: row.outcome_at === null ? null : fromTimestamp(row.outcome_at),
  };
}

export function createDecisionRepository(db: Kysely<Database>): DecisionRepository {
  return {
    async decide(decision) {
      // ON CONFLICT DO NOTHING: the moment's key decides once; a unique violation would abort a PostgreSQL transaction.
      const inserted = await db
        .insertInto('decisions')
        .values({
          id: decision.id,
          participant_id: decision.participantId,
          study_id: decision.studyId,
          arm_id: decision.armId,
          decision_point_id: decision.decisionPointId,
          local_date: decision.localDate,
          slot: decision.slot,
          intended_at: toTimestamp(decision.intendedAt),
          intended_local: decision.intendedLocal,
          available: decision.available ? 1 : 0,
          unavailable_reason: decision.unavailableReason,
          probabilities: toJson(decision.probabilities),
          option: decision.option,
          draw: decision.draw,
          design_hash: decision.designHash,
          decided_at: toTimestamp(decision.decidedAt),
          sent_outbound_id: decision.sentOutboundId,
          sent_at: decision.sentAt === null ? null : toTimestamp(decision.sentAt),
          outcome: null,
          outcome_at: null,
        })
        .onConflict((conflict) => conflict.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    async get(id) {
      const row = await db.selectFrom('decisions').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toDecision(row);
    },

    async recordOutcome(id, outcome, at) {
      await db
        .updateTable('decisions')
        .set({ outcome: toJson(outcome), outcome_at: toTimestamp(at) })
        .where('id', '=', id)
        .execute();
    },

    async listForParticipant(participantId) {
      const rows = await db
        .selectFrom('decisions')
        .selectAll()
        .where('participant_id', '=', participantId)
        .orderBy('intended_at')
        .orderBy('id')
        .execute();
      return rows.map(toDecision);
    },

    async page(after, limit) {
      let query = db.selectFrom('decisions').selectAll().orderBy('id').limit(limit);
      if (after !== undefined) query = query.where('id', '>', after);
      return (await query.execute()).map(toDecision);
    },
  };
}
