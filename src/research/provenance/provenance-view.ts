/** The JSON shape of an LLM call's provenance, shared by the history endpoint and the export. */
import type { LlmCall } from '../../store/ports/conversation-store.ts';

export interface ProvenanceJson {
  llm_call_id: number;
  purpose: string;
  model: string;
  provider_host: string;
  temperature: number | null;
  prompt_file: string | null;
  prompt_version: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  latency_ms: number;
  outcome: string;
  created_at: string;
}

export function provenanceJson(call: LlmCall): ProvenanceJson {
  return {
    llm_call_id: call.id,
    purpose: call.purpose,
    model: call.model,
    provider_host: call.providerHost,
    temperature: call.temperature ?? null,
    prompt_file: call.promptFile ?? null,
    prompt_version: call.promptVersion ?? null,
    prompt_tokens: call.promptTokens ?? null,
    completion_tokens: call.completionTokens ?? null,
    total_tokens: call.totalTokens ?? null,
    latency_ms: call.latencyMs,
    outcome: call.outcome,
    created_at: call.createdAt.toISOString(),
  };
}

/** The calls the entries point at, by id. */
export async function callsById(
  llmCalls: { getMany(ids: readonly number[]): Promise<LlmCall[]> },
  entries: readonly { llmCallId?: number }[],
): Promise<Map<number, LlmCall>> {
  const ids = [...new Set(entries.flatMap((entry) => (entry.llmCallId === undefined ? [] : [entry.llmCallId])))];
  const calls = await llmCalls.getMany(ids);
  return new Map(calls.map((call) => [call.id, call]));
}
