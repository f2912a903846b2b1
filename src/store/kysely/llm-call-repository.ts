import type { Kysely, Selectable } from 'kysely';
import type { LlmCall, LlmCallRepository, NewLlmCall } from '../ports/conversation-store.ts';
import { fromTimestamp, optionalField, toTimestamp } from './column-codecs.ts';
import type { Database, LlmCallsTable } from './database.ts';
import { insertLlmCallRow } from './sql/turn-records.ts';

export function createLlmCallRepository(db: Kysely<Database>): LlmCallRepository {
  return {
    async record(call: NewLlmCall) {
      return insertLlmCallRow(db, [
        call.participantId ?? null,
        call.purpose,
        call.model,
        call.providerHost,
        call.temperature ?? null,
        call.promptFile ?? null,
        call.promptVersion ?? null,
        call.promptTokens ?? null,
        call.completionTokens ?? null,
        call.totalTokens ?? null,
        Math.round(call.latencyMs),
        call.outcome,
        call.error ?? null,
        toTimestamp(call.createdAt),
      ]);
    },

    async getMany(ids) {
      if (ids.length === 0) return [];
      const rows = await db
        .selectFrom('llm_calls')
        .selectAll()
        .where('id', 'in', [...ids])
        .orderBy('id', 'asc')
        .execute();
      return rows.map(toLlmCall);
    },
  };
}

export function toLlmCall(row: Selectable<LlmCallsTable>): LlmCall {
  const number = (value: number | null): number | null => (value === null ? null : Number(value));
  return {
    id: Number(row.id),
    ...optionalField('participantId', row.participant_id),
    purpose: row.purpose,
    model: row.model,
    providerHost: row.provider_host,
    ...optionalField('temperature', number(row.temperature)),
    ...optionalField('promptFile', row.prompt_file),
    ...optionalField('promptVersion', row.prompt_version),
    ...optionalField('promptTokens', number(row.prompt_tokens)),
    ...optionalField('completionTokens', number(row.completion_tokens)),
    ...optionalField('totalTokens', number(row.total_tokens)),
    latencyMs: Number(row.latency_ms),
    outcome: row.outcome,
    ...optionalField('error', row.error),
    createdAt: fromTimestamp(row.created_at),
  };
}
