/**
 * The bounded tool loop shared by every module (§8.1):
 * 1. at most `maxRounds` (10) model calls;
 * 2. content ends the loop; a response with content AND tool calls executes the calls first (their results go to
 *    the transcript) and then returns the content;
 * 3. tool calls without content are executed in order and the loop continues;
 * 4. neither content nor tool calls → fallback text;
 * 5. tool errors are results the model sees, never exceptions (the registry guarantees it).
 * A failing model call ends the turn with the "assistant unavailable" fallback; the error is logged by the caller.
 */
import { errorMessage } from '../domain/errors.ts';
import type { ChatMessage, LlmClient } from '../llm/llm.ts';
import type { ToolContext } from '../tools/tool.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import type { TurnRecorder } from './turn-recorder.ts';

export const MAX_TOOL_ROUNDS = 10;

/** The English texts of the catalogue keys `reply.*`; the flow passes the participant's language (`fallbackText`). */
export const FALLBACK_TEXT = {
  emptyResponse: "I'm here to help. Could you tell me a bit more?",
  roundsExhausted: 'Sorry, I got a bit tangled up there. Could you say that again in a few words?',
  llmUnavailable: 'Sorry, the assistant is unavailable right now. Please try again a little later.',
} as const;

export type ToolLoopOutcome = 'content' | 'empty_response' | 'rounds_exhausted' | 'llm_error';

export interface ExecutedToolCall {
  name: string;
  status: string;
}

export interface ToolLoopResult {
  content: string;
  outcome: ToolLoopOutcome;
  rounds: number;
  toolCalls: ExecutedToolCall[];
  reasoning: string[];
  model: string | undefined;
  error?: string;
}

export interface ToolLoopOptions {
  llm: LlmClient;
  registry: ToolRegistry;
  toolNames: readonly string[];
  context: ToolContext;
  /** Builds the full request for a round from this loop's tool exchange so far (the single context builder). */
  buildMessages(loopMessages: readonly ChatMessage[]): ChatMessage[];
  recorder: TurnRecorder;
  now(): number;
  purpose: string;
  maxRounds?: number;
  /** The fallback replies in the participant's language; defaults to `FALLBACK_TEXT` (English). */
  fallbackText?: { readonly [K in keyof typeof FALLBACK_TEXT]: string };
}

export async function runToolLoop(options: ToolLoopOptions): Promise<ToolLoopResult> {
  const maxRounds = options.maxRounds ?? MAX_TOOL_ROUNDS;
  const fallbackText = options.fallbackText ?? FALLBACK_TEXT;
  const tools = options.registry.definitions(options.toolNames);
  const loopMessages: ChatMessage[] = [];
  const toolCalls: ExecutedToolCall[] = [];
  const reasoning: string[] = [];
  let model: string | undefined;

  for (let round = 1; round <= maxRounds; round += 1) {
    let response: Awaited<ReturnType<LlmClient['chat']>>;
    try {
      response = await options.llm.chat({
        messages: options.buildMessages(loopMessages),
        ...(tools.length > 0 ? { tools } : {}),
        purpose: options.purpose,
      });
    } catch (error) {
      return {
        content: fallbackText.llmUnavailable,
        outcome: 'llm_error',
        rounds: round,
        toolCalls,
        reasoning,
        model,
        error: errorMessage(error),
      };
    }
    model = response.model;
    if (response.reasoning) reasoning.push(response.reasoning);
    const content = response.content.trim();

    if (response.toolCalls.length > 0) {
      await options.recorder.assistantToolCalls(response.content, response.toolCalls, response.model);
      loopMessages.push({ role: 'assistant', content: response.content, toolCalls: response.toolCalls });
      // All calls of one response run, in order: a multi-intent message can save a field and schedule at once.
      for (const call of response.toolCalls) {
        const started = options.now();
        const result = await options.registry.execute(call, options.context, options.toolNames);
        await options.recorder.toolResult(call, result, options.now() - started);
        toolCalls.push({ name: call.name, status: result.status });
        loopMessages.push({ role: 'tool', toolCallId: call.id, content: JSON.stringify(result) });
      }
      if (content) return { content, outcome: 'content', rounds: round, toolCalls, reasoning, model };
      continue;
    }
    if (content) return { content, outcome: 'content', rounds: round, toolCalls, reasoning, model };
    return {
      content: fallbackText.emptyResponse,
      outcome: 'empty_response',
      rounds: round,
      toolCalls,
      reasoning,
      model,
    };
  }
  return {
    content: fallbackText.roundsExhausted,
    outcome: 'rounds_exhausted',
    rounds: maxRounds,
    toolCalls,
    reasoning,
    model,
  };
}
