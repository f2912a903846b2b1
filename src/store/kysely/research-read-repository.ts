/**
 * Keyset-paged reads for exports and statistics: each call returns at most `limit` rows after a cursor, so a caller
 * walking a whole table holds one page at a time, whatever the table's size.
 */
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { JobStatus, ResearchFilter, ResearchReadRepository } from '../store.ts';
import { toTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';
import { toStoredEvent } from './event-repository.ts';
import { toJob } from './job-repository.ts';
import { literalLimit } from './literal-limit.ts';
import { toLlmCall } from './llm-call-repository.ts';
import { toParticipant } from './participant-repository.ts';
import { toTranscriptEntry } from './transcript-repository.ts';

type Filterable = 'transcript' | 'events' | 'jobs';

function filtered<T extends Filterable, O>(
  query: SelectQueryBuilder<Database, T, O>,
  filter: ResearchFilter,
): SelectQueryBuilder<Database, T, O> {
  let result = query;
  if (filter.participantIds && filter.participantIds.length > 0) {
    // biome-ignore lint/suspicious/noExplicitAny: the column exists on every filterable table
    result = result.where('participant_id' as any, 'in', [...filter.participantIds]);
  }
  if (filter.since !== undefined) {
    // biome-ignore lint/suspicious/noExplicitAny: the column exists on every filterable table
    result = result.where('created_at' as any, '>=', toTimestamp(filter.since));
  }
  return result;
}

export function createResearchReadRepository(db: Kysely<Database>): ResearchReadRepository {
  return {
    async participantsPage(filter, afterId, limit) {
      let query = db.selectFrom('participants').selectAll();
      if (filter.participantIds && filter.participantIds.length > 0) {
        query = query.where('id', 'in', [...filter.participantIds]);
      }
      if (filter.since !== undefined) query = query.where('enrolled_at', '>=', toTimestamp(filter.since));
      if (afterId !== undefined) query = query.where('id', '>', afterId);
      const rows = await query.orderBy('id', 'asc').limit(literalLimit(limit)).execute();
      return rows.map(toParticipant);
    },

    async transcriptPage(filter, afterId, limit) {
      let query = filtered(db.selectFrom('transcript').selectAll(), filter);
      if (afterId !== undefined) query = query.where('id', '>', afterId);
      const rows = await query.orderBy('id', 'asc').limit(literalLimit(limit)).execute();
      return rows.map(toTranscriptEntry);
    },

    async eventsPage(filter, afterId, limit) {
      let query = filtered(db.selectFrom('events').selectAll(), filter);
      if (afterId !== undefined) query = query.where('id', '>', afterId);
      const rows = await query.orderBy('id', 'asc').limit(literalLimit(limit)).execute();
      return rows.map(toStoredEvent);
    },

    async jobsPage(filter, afterId, limit) {
      let query = filtered(db.selectFrom('jobs').selectAll(), filter);
      if (afterId !== undefined) query = query.where('id', '>', afterId);
      const rows = await query.orderBy('id', 'asc').limit(literalLimit(limit)).execute();
      return rows.map(toJob);
    },

    async llmCallsPage(filter, afterId, limit) {
      let query = db.selectFrom('llm_calls').selectAll();
      if (filter.since !== undefined) query = query.where('created_at', '>=', toTimestamp(filter.since));
      if (filter.until !== undefined) query = query.where('created_at', '<', toTimestamp(filter.until));
      if (afterId !== undefined) query = query.where('id', '>', afterId);
      const rows = await query.orderBy('id', 'asc').limit(literalLimit(limit)).execute();
      return rows.map(toLlmCall);
    },

    async jobsCreatedBetween(kind, participantIds, from, to) {
      if (participantIds.length === 0) return [];
      const rows = await db
        .selectFrom('jobs')
        .selectAll()
        .where('kind', '=', kind)
        .where('participant_id', 'in', [...participantIds])
        .where('created_at', '>=', toTimestamp(from))
        .where('created_at', '<=', toTimestamp(to))
        .execute();
      return rows.map(toJob);
    },

    async jobStatusCountsByKeyPrefix(prefix) {
      const rows = await db
        .selectFrom('jobs')
        .select(['status', (eb) => eb.fn.countAll<number | string>().as('count')])
        .where(sql<string>`substr(dedup_key, 1, ${prefix.length})`, '=', prefix)
        .groupBy('status')
        .execute();
      const counts: Partial<Record<JobStatus, number>> = {};
      for (const row of rows) counts[row.status as JobStatus] = Number(row.count);
      return counts;
    },
  };
}
