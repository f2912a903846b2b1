/**
 * Domain objects → the API's snake_case JSON (the public contract). Times are ISO-8601 UTC strings.
 */
import type { z } from 'zod';
import type { Participant } from '../domain/participant.ts';
import type { HistoryEntry, ParticipantStateView } from '../participants/participant-service.ts';
import { provenanceJson } from '../research/provenance/provenance-view.ts';
import type { LlmCall } from '../store/ports/conversation-store.ts';
import type { historyEntrySchema, participantSchema, stateSchema } from './schemas.ts';

export type ParticipantJson = z.infer<typeof participantSchema>;
export type HistoryEntryJson = z.infer<typeof historyEntrySchema>;
export type StateJson = z.infer<typeof stateSchema>;

export function participantJson(participant: Participant): ParticipantJson {
  return {
    id: participant.id,
    phone_number: participant.phoneNumber,
    name: participant.name,
    gender: participant.gender,
    ethnicity: participant.ethnicity,
    background: participant.background,
    timezone: participant.timezone,
    language: participant.language ?? 'en',
    channel: participant.channel,
    ...(participant.arm === undefined ? {} : { arm: participant.arm }),
    status: participant.status,
    enrolled_at: participant.enrolledAt.toISOString(),
    created_at: participant.createdAt.toISOString(),
    updated_at: participant.updatedAt.toISOString(),
  };
}

/** Tool calls in the OpenAI message shape, so a transcript can be replayed against any compatible API. */
export function historyEntryJson(entry: HistoryEntry, calls?: ReadonlyMap<number, LlmCall>): HistoryEntryJson {
  const call = entry.llmCallId === undefined ? undefined : calls?.get(entry.llmCallId);
  return {
    id: entry.id,
    role: entry.role,
    kind: entry.kind,
    content: entry.content,
    ...(entry.toolCalls?.length
      ? {
          tool_calls: entry.toolCalls.map((call) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.name, arguments: call.arguments },
          })),
        }
      : {}),
    ...(entry.toolCallId ? { tool_call_id: entry.toolCallId } : {}),
    ...(entry.toolName ? { tool_name: entry.toolName } : {}),
    ...(entry.module ? { module: entry.module } : {}),
    ...(entry.model ? { model: entry.model } : {}),
    ...(entry.llmCallId === undefined ? {} : { llm_call_id: entry.llmCallId }),
    ...(call ? { provenance: provenanceJson(call) } : {}),
    ...(entry.outboundId ? { outbound_id: entry.outboundId } : {}),
    ...(entry.delivery
      ? {
          delivery: {
            status: entry.delivery.status,
            at: entry.delivery.createdAt.toISOString(),
            channel: entry.delivery.channel,
            ...(entry.delivery.errorCode ? { error_code: entry.delivery.errorCode } : {}),
            ...(entry.delivery.errorMessage ? { error: entry.delivery.errorMessage } : {}),
          },
        }
      : {}),
    created_at: entry.createdAt.toISOString(),
  };
}

export function stateJson(state: ParticipantStateView): StateJson {
  return {
    current_state: state.currentState,
    conversation_state: state.conversationState,
    profile: state.profile ? { ...state.profile } : null,
    schedules: state.schedules,
    pending_jobs: state.pendingJobs.map((job) => ({
      id: job.id,
      kind: job.kind,
      run_at: job.runAt.toISOString(),
      dedup_key: job.dedupKey ?? null,
      status: job.status,
    })),
    data: Object.fromEntries(Object.entries(state.data).filter(([, value]) => typeof value === 'string')) as Record<
      string,
      string
    >,
  };
}
