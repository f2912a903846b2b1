/**
 * The overview's figures and the adherence grid, from the study-day summary (migration 022) and indexed ranges:
 * per local date through `participant_days (local_date, reply_seconds, done)` (a covering index: the medians walk it
 * in order), LLM use through `llm_calls (created_at)`, the grid as a keyset page of one of three orders and the days
 * and inactive spans of that page's participants only.
 */
import { type Kysely, sql } from 'kysely';
import { ParticipantStatus } from '../../domain/participant.ts';
import { studyDaySql } from '../migrations/study-day-sql.ts';
import type { AdherenceQuery, AdherenceRow, StudyDayRepository, UsageFigures } from '../ports/roster-reads.ts';
import { fromOptionalTimestamp, fromTimestamp, toTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';
import { literalLimit } from './literal-limit.ts';
import { toParticipant } from './participant-repository.ts';
import type { StoreDialect } from './store-dialect.ts';

export function createStudyDayRepository(db: Kysely<Database>, dialect: StoreDialect): StudyDayRepository {
  const expressions = studyDaySql(dialect.name);

  /** The median of one date's reply latencies: the middle one or two of `count`, read in index order. */
  async function medianReplySeconds(localDate: string, count: number): Promise<number | null> {
    if (count === 0) return null;
    const middle = await db
      .selectFrom('participant_days')
      .select('reply_seconds')
      .where('local_date', '=', localDate)
      .where('reply_seconds', 'is not', null)
      .orderBy('reply_seconds')
      .limit(literalLimit(count % 2 === 1 ? 1 : 2))
      .offset(literalLimit(Math.floor((count - 1) / 2)))
      .execute();
    const values = middle.map((row) => Number(row.reply_seconds));
    return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;
  }

  /** The grid page's participant ids and sort values, in order, one more than asked when there is a next page. */
  function pageKeys(query: AdherenceQuery) {
    const { after, status } = query;
    const limit = literalLimit(query.limit + 1);
    if (query.sort === 'adherence') {
      let keys = db
        .selectFrom('participant_adherence')
        .innerJoin('participants', 'participants.id', 'participant_adherence.participant_id')
        .select(['participant_adherence.participant_id as id', 'participant_adherence.adherence_rank as sort_value']);
      if (status) keys = keys.where('participants.status', '=', status);
      if (after) {
        keys = keys.where(
          sql<boolean>`(participant_adherence.adherence_rank, participant_adherence.participant_id) > (${Number(after.value)}, ${after.id})`,
        );
      }
      return keys
        .orderBy('participant_adherence.adherence_rank')
        .orderBy('participant_adherence.participant_id')
        .limit(limit)
        .execute();
    }
    let keys = db.selectFrom('participants');
    if (status) keys = keys.where('participants.status', '=', status);
    if (query.sort === 'name') {
      const name = expressions.foldedName('participants.name');
      if (after) keys = keys.where(sql<boolean>`(${name}, participants.id) > (${after.value}, ${after.id})`);
      return keys
        .select(['participants.id', name.as('sort_value')])
        .orderBy(name)
        .orderBy('participants.id')
        .limit(limit)
        .execute();
    }
    if (after) {
      keys = keys.where(sql<boolean>`(participants.enrolled_at, participants.id) < (${after.value}, ${after.id})`);
    }
    return keys
      .select(['participants.id', 'participants.enrolled_at as sort_value'])
      .orderBy('participants.enrolled_at', 'desc')
      .orderBy('participants.id', 'desc')
      .limit(limit)
      .execute();
  }

  return {
    async figuresByDate(fromDate, toDate) {
      const rows = await db
        .selectFrom('participant_days')
        .select((expression) => [
          'local_date',
          expression.fn.countAll().as('sent'),
          expression.fn.count('reply_seconds').as('answered'),
          expression.fn.sum('done').as('done'),
        ])
        .where('local_date', '>=', fromDate)
        .where('local_date', '<=', toDate)
        .groupBy('local_date')
        .orderBy('local_date')
        .execute();
      return Promise.all(
        rows.map(async (row) => ({
          localDate: row.local_date,
          promptsSent: Number(row.sent),
          promptsAnswered: Number(row.answered),
          done: Number(row.done ?? 0),
          medianReplySeconds: await medianReplySeconds(row.local_date, Number(row.answered)),
        })),
      );
    },

    async usageByUtcDate(from, to) {
      // One aggregate per date over the calls' covering index: grouping a fortnight of calls by a computed date cost
      // more than the aggregates themselves.
      const dates: { date: string; start: Date; end: Date }[] = [];
      for (let start = from; start < to; ) {
        const next = new Date(
          Math.min(to.getTime(), Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + 1)),
        );
        dates.push({ date: start.toISOString().slice(0, 10), start, end: next });
        start = next;
      }
      const failedDate = expressions.utcDate('updated_at');
      const failures = await db
        .selectFrom('jobs')
        .select((expression) => [failedDate.as('date'), expression.fn.countAll().as('failed')])
        .where(sql<boolean>`status = 'failed'`)
        .where(sql<boolean>`kind = 'deliver_message'`)
        .where('updated_at', '>=', toTimestamp(from))
        .where('updated_at', '<', toTimestamp(to))
        .groupBy(failedDate)
        .execute();
      const failedByDate = new Map(failures.map((row) => [row.date, Number(row.failed)]));
      // In parallel: on PostgreSQL each is a round trip of its own (SQLite runs them one after another anyway).
      const perDate = await Promise.all(
        dates.map(({ start, end }) =>
          db
            .selectFrom('llm_calls')
            .select((expression) => [
              expression.fn.countAll().as('calls'),
              sql<number | null>`sum(case when outcome = 'success' then 0 else 1 end)`.as('errors'),
              sql<number | null>`sum(total_tokens)`.as('tokens'),
            ])
            .where('created_at', '>=', toTimestamp(start))
            .where('created_at', '<', toTimestamp(end))
            .executeTakeFirstOrThrow(),
        ),
      );
      const figures: UsageFigures[] = [];
      for (const [index, { date }] of dates.entries()) {
        const calls = perDate[index];
        const failed = failedByDate.get(date) ?? 0;
        if (!calls || (Number(calls.calls) === 0 && failed === 0)) continue;
        figures.push({
          date,
          llmCalls: Number(calls.calls),
          llmErrors: Number(calls.errors ?? 0),
          llmTokens: Number(calls.tokens ?? 0),
          failedDeliveries: failed,
        });
      }
      return figures;
    },

    async participantCounts() {
      const subState = expressions.dataKey('state_data', 'conversationState');
      const [statuses, subStates] = await Promise.all([
        db
          .selectFrom('participants')
          .select((expression) => ['status', expression.fn.countAll().as('count')])
          .groupBy('status')
          .execute(),
        db
          .selectFrom('flow_states')
          .select((expression) => [subState.as('sub_state'), expression.fn.countAll().as('count')])
          .groupBy(subState)
          .execute(),
      ]);
      const byStatus: Record<string, number> = {};
      for (const row of statuses) byStatus[row.status] = Number(row.count);
      const total = Object.values(byStatus).reduce((sum, count) => sum + count, 0);
      const bySubState: Record<string, number> = {};
      for (const row of subStates) {
        const key = row.sub_state ?? 'NONE';
        bySubState[key] = (bySubState[key] ?? 0) + Number(row.count);
      }
      const withState = Object.values(bySubState).reduce((sum, count) => sum + count, 0);
      if (total > withState) bySubState.NONE = (bySubState.NONE ?? 0) + total - withState;
      return { byStatus, bySubState };
    },

    async adherencePage(query) {
      const [keys, count] = await Promise.all([
        pageKeys(query),
        (query.status
          ? db.selectFrom('participants').where('status', '=', query.status)
          : db.selectFrom('participants')
        )
          .select((expression) => expression.fn.countAll().as('count'))
          .executeTakeFirstOrThrow(),
      ]);
      const shown = keys.slice(0, query.limit);
      const ids = shown.map((key) => key.id);
      const last = shown.at(-1);
      const next =
        keys.length > query.limit && last
          ? {
              value: last.sort_value instanceof Date ? toTimestamp(last.sort_value) : String(last.sort_value),
              id: last.id,
            }
          : undefined;
      return { rows: await rowsFor(ids, query), total: Number(count.count), next };
    },
  };

  async function rowsFor(ids: readonly string[], query: AdherenceQuery): Promise<AdherenceRow[]> {
    if (ids.length === 0) return [];
    const [participants, days, periods] = await Promise.all([
      db
        .selectFrom('participants')
        .leftJoin('participant_adherence', 'participant_adherence.participant_id', 'participants.id')
        .selectAll('participants')
        .select([
          'participant_adherence.prompts_sent',
          'participant_adherence.prompts_answered',
          'participant_adherence.prompts_done',
        ])
        .where('participants.id', 'in', ids)
        .execute(),
      db
        .selectFrom('participant_days')
        .selectAll()
        .where('participant_id', 'in', ids)
        .where('local_date', '>=', query.fromDate)
        .where('local_date', '<=', query.toDate)
        .orderBy('participant_id')
        .orderBy('local_date')
        .execute(),
      db
        .selectFrom('participant_status_periods')
        .selectAll()
        .where('participant_id', 'in', ids)
        // A day early: the first date begins up to 14 hours before it does in UTC.
        .where((where) =>
          where.or([
            where('ended_at', 'is', null),
            where('ended_at', '>=', toTimestamp(new Date(Date.parse(query.fromDate) - 86_400_000))),
          ]),
        )
        .orderBy('participant_id')
        .orderBy('started_at')
        .execute(),
    ]);
    const byId = new Map(participants.map((row) => [row.id, row]));
    return ids.flatMap((id): AdherenceRow[] => {
      const row = byId.get(id);
      if (!row) return [];
      return [
        {
          participant: toParticipant(row),
          promptsSent: Number(row.prompts_sent ?? 0),
          promptsAnswered: Number(row.prompts_answered ?? 0),
          promptsDone: Number(row.prompts_done ?? 0),
          days: days
            .filter((day) => day.participant_id === id)
            .map((day) => ({
              localDate: day.local_date,
              promptSentAt: fromTimestamp(day.prompt_sent_at),
              answered: day.first_reply_at !== null,
              done: Number(day.done) === 1,
            })),
          inactive: periods
            .filter((period) => period.participant_id === id && period.status !== ParticipantStatus.ACTIVE)
            .map((period) => ({
              status: period.status,
              from: fromTimestamp(period.started_at),
              until: fromOptionalTimestamp(period.ended_at),
            })),
        },
      ];
    });
  }
}
