/**
 * Writes what happens inside a turn to the append-only transcript and the event log, each entry linked to the
 * inbound message that caused it (specification §Tool loop). Tool exchanges are recorded as they happen, so a
 * crash mid-loop still leaves the research record of what was executed.
 */

import type { Clock } from '../domain/clock.ts';
import type { LlmToolCall } from '../llm/llm.ts';
import type { Store } from '../store/store.ts';
import type { ToolResult } from './tool.ts';

/** Each method records in the caller's unit of work when one is open (the tool loop's exchange), else on its own. */
export interface TurnRecorder {
  assistantToolCalls(content: string, calls: readonly LlmToolCall[], model: string, llmCallId?: number): Promise<void>;
  toolResult(call: LlmToolCall, result: ToolResult, durationMs: number): Promise<void>;
}

/** Optional observer for metrics: called once per executed tool call. */
export type ToolCallObserver = (event: { name: string; outcome: string; durationMs: number }) => void;

function parseForAudit(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/**
 * The result as the `tool-called` event keeps it: without the profile snapshot, which is ≈ 0.6 kB on every profile
 * save and already stored once, in the tool_result transcript row with the same call id.
 */
export function auditedResult(result: ToolResult): Omit<ToolResult, 'profile'> {
  const { profile: _snapshot, ...summary } = result;
  return summary;
}

export function createTurnRecorder(options: {
  store: Store;
  clock: Clock;
  participantId: string;
  module: string;
  sourceMessageId: string | undefined;
  onToolCall?: ToolCallObserver | undefined;
}): TurnRecorder {
  const { store, clock, participantId, module, sourceMessageId } = options;
  const link = sourceMessageId ? { sourceMessageId } : {};
  return {
    async assistantToolCalls(content, calls, model, llmCallId) {
      await store.transcript.append([
        {
          participantId,
          role: 'assistant',
          kind: 'tool_call',
          content,
          toolCalls: calls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments })),
          module,
          model,
          ...(llmCallId === undefined ? {} : { llmCallId }),
          createdAt: clock.now(),
          ...link,
        },
      ]);
    },
    async toolResult(call, result, durationMs) {
      const now = clock.now();
      await store.transaction(async (tx) => {
        await tx.transcript.append([
          {
            participantId,
            role: 'tool',
            kind: 'tool_result',
            content: JSON.stringify(result),
            toolCallId: call.id,
            toolName: call.name,
            module,
            createdAt: now,
            ...link,
          },
        ]);
        await tx.events.record({
          participantId,
          type: 'tool-called',
          data: {
            name: call.name,
            call_id: call.id,
            arguments: parseForAudit(call.arguments),
            result: auditedResult(result),
            outcome: result.status,
            duration_ms: durationMs,
            module,
          },
          createdAt: now,
          ...link,
        });
      });
      const { onToolCall } = options;
      if (onToolCall) store.afterCommit(() => onToolCall({ name: call.name, outcome: result.status, durationMs }));
    },
  };
}
