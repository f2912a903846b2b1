import type { Insertable, Kysely, Selectable } from 'kysely';
import type { LlmCall, LlmCallRepository, NewLlmCall } from '../store.ts';
import { fromTimestamp, optionalField, toTimestamp } from './column-codecs.ts';
import type { Database, LlmCallsTable } from './database.ts';
import { firstRow, preparedQuery } from './prepared-query.ts';

const insertCall = preparedQuery((db, row: Insertable<LlmCallsTable>) =>
  db.insertInto('llm_calls').values(row).returning('id'),
);

export function createLlmCallRepository(db: Kysely<Database>): LlmCallRepository {
  return {
    async record(call: NewLlmCall) {
      const { rows } = await insertCall.execute(db, {
        participant_id: call.participantId ?? null,
        purpose: call.purpose,
        model: call.model,
        provider_host: call.providerHost,
        temperature: call.temperature ?? null,
        prompt_file: call.promptFile ?? null,
        prompt_version: call.promptVersion ?? null,
        prompt_tokens: call.promptTokens ?? null,
        completion_tokens: call.completionTokens ?? null,
        total_tokens: call.totalTokens ?? null,
        latency_ms: Math.round(call.latencyMs),
        outcome: call.outcome,
        error: call.error ?? null,
        created_at: toTimestamp(call.createdAt),
      });
      return Number(firstRow(rows).id);
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
