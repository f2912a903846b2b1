/**
 * The LLM port: one chat call with messages and tools → content and/or tool calls.
 *
 * Adapters: `openai-compatible-llm.ts` (the official `openai` package; OpenAI, Ollama, vLLM, llama.cpp,
 * OpenRouter…) and `fake-llm.ts` (scripted responses, records every request) for tests.
 */
export interface LlmToolCall {
  id: string;
  name: string;
  /** Raw JSON text exactly as the model produced it; round-trips byte-exact. */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: LlmToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** A tool as the model sees it: the JSON Schema is generated from the tool's zod schema. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  /** Overrides the adapter's configured temperature. */
  temperature?: number;
  /** Free-form label for logs and metrics: `intake`, `feedback`, `prompt-generator`. */
  purpose?: string;
  /** The participant whose turn this call serves, for provenance. */
  participantId?: string;
  /**
   * The caller has the call's provenance row written in the unit of work it opens next, through
   * {@link ChatResponse.recordProvenance}: one commit less per call. Only for a caller that always does (the tool
   * loop, the habit prompt generator); a failed call's row is written at once either way.
   */
  deferProvenance?: boolean;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ChatResponse {
  /** Empty string when the model produced no text. */
  content: string;
  toolCalls: LlmToolCall[];
  /** Reasoning text, where the provider returns it. */
  reasoning?: string;
  usage?: TokenUsage;
  model: string;
  /** The provenance record (`llm_calls` row) of this call, when one was recorded. */
  callId?: number;
  /**
   * With `deferProvenance`: writes this call's provenance row, in the caller's unit of work when one is open, and
   * returns its id. Once that write has committed, later calls return the same id without writing again; a
   * rolled-back write is made again. Set by a decorator (research/provenance), never by an adapter.
   */
  recordProvenance?: () => Promise<number | undefined>;
}

export interface LlmClient {
  readonly model: string;
  /** Rejects with `AppError('llm_error' | 'unavailable')` after the adapter's retry budget is spent. */
  chat(request: ChatRequest, options?: { signal?: AbortSignal }): Promise<ChatResponse>;
}
