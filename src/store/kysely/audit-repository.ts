import { type Kysely, type Selectable, type SelectQueryBuilder, sql } from 'kysely';
import type { AuditEntry, AuditFilter, AuditOutcome, AuditRepository } from '../staff-store.ts';
import { fromTimestamp, toTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';
import type { AuditLogTable } from './staff-tables.ts';

/** The audit trail: inserts and reads only, by design (no route may edit or delete what it recorded). */
export function createAuditRepository(db: Kysely<Database>): AuditRepository {
  function filtered<O>(
    query: SelectQueryBuilder<Database, 'audit_log', O>,
    filter: AuditFilter,
  ): SelectQueryBuilder<Database, 'audit_log', O> {
    let result = query;
    if (filter.actor) result = result.where(contains('actor', filter.actor));
    if (filter.action) result = result.where(contains('action', filter.action));
    if (filter.participantId) result = result.where('participant_id', '=', filter.participantId);
    if (filter.from) result = result.where('at', '>=', toTimestamp(filter.from));
    if (filter.to) result = result.where('at', '<', toTimestamp(filter.to));
    return result;
  }
  return {
    async append(entry) {
      await db
        .insertInto('audit_log')
        .values({
          at: toTimestamp(entry.at),
          actor: entry.actor,
          actor_user_id: entry.actorUserId ?? null,
          actor_token_id: entry.actorTokenId ?? null,
          action: entry.action,
          participant_id: entry.participantId ?? null,
          address: entry.address ?? null,
          outcome: entry.outcome,
          status: entry.status ?? null,
          detail: entry.detail ?? null,
        })
        .execute();
    },
    async list(filter, limit) {
      const rows = await filtered(db.selectFrom('audit_log').selectAll(), filter)
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map(toEntry);
    },
    async page(filter, after, limit) {
      let query = filtered(db.selectFrom('audit_log').selectAll(), filter);
      if (after !== undefined) query = query.where('id', '>', after);
      const rows = await query.orderBy('id').limit(limit).execute();
      return rows.map(toEntry);
    },
  };
}

/** A substring match, the same on both databases: SQLite's `like` has no escape character unless one is named. */
function contains(column: 'actor' | 'action', text: string) {
  const pattern = `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
  return sql<boolean>`lower(${sql.ref(column)}) like lower(${pattern}) escape '\\'`;
}

function toEntry(row: Selectable<AuditLogTable>): AuditEntry {
  return {
    id: Number(row.id),
    at: fromTimestamp(row.at),
    actor: row.actor,
    actorUserId: row.actor_user_id ?? undefined,
    actorTokenId: row.actor_token_id ?? undefined,
    action: row.action,
    participantId: row.participant_id ?? undefined,
    address: row.address ?? undefined,
    outcome: row.outcome as AuditOutcome,
    status: row.status ?? undefined,
    detail: row.detail ?? undefined,
  };
}
