/**
 * The bounded tool loop shared by every module (specification §Tool loop):
 * 1. at most `maxRounds` (10) model calls;
 * 2. content ends the loop; a response with content AND tool calls executes the calls first (their results go to
 *    the transcript) and then returns the content;
 * 3. tool calls without content are executed in order and the loop continues;
 * 4. neither content nor tool calls → fallback text;
 * 5. tool errors are results the model sees, never exceptions (the registry guarantees it).
 * A failing model call ends the turn with the "assistant unavailable" fallback; the error is logged by the caller.
 */
import { errorMessage } from '../domain/errors.ts';
import type { ChatMessage, ChatResponse, LlmClient, LlmToolCall } from '../llm/llm.ts';
import { parseTextToolCalls, type TextToolCall, type ToolProtocol } from '../llm/text-tool-protocol.ts';
import type { ToolContext, ToolResult } from './tool.ts';
import { errorResult } from './tool.ts';
import type { ToolRegistry } from './tool-registry.ts';
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
  /** The provenance record of the model call that produced `content`, when recorded. */
  llmCallId?: number;
  /**
   * The last model call's provenance row, not written yet (the loop defers it when it has `transaction`): the caller
   * has it written in the unit of work that sends the reply. When `outcome` is `content`, its id is the reply's
   * `llmCallId`.
   */
  recordProvenance?: () => Promise<number | undefined>;
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
  /**
   * `LLM_TOOL_PROTOCOL` (default `native`). In `text` mode the request carries no `tools` (the context builder
   * describes them) and the calls are parsed from the model's text; the loop, the transcript and the results are
   * otherwise the same.
   */
  toolProtocol?: ToolProtocol;
  /** The fallback replies in the participant's language; defaults to `FALLBACK_TEXT` (English). */
  fallbackText?: { readonly [K in keyof typeof FALLBACK_TEXT]: string };
  /**
   * `Store.transaction`, which opens a unit of work (or joins the open one). When given, an exchange whose calls are
   * all `databaseOnly` tools runs in one unit of work (the calls, the tools' writes, the results), and each record
   * is written in one otherwise.
   */
  transaction?: <T>(fn: () => Promise<T>) => Promise<T>;
}

/**
 * Thrown inside an exchange's unit of work when a call ends in an error result: the unit of work rolls back (the
 * failing tool's writes go with it) and the exchange runs again with that call's error result decided up front.
 */
class ToolFailed extends Error {
  readonly index: number;
  readonly result: ToolResult;

  constructor(index: number, result: ToolResult) {
    super(result.message);
    this.index = index;
    this.result = result;
  }
}

/**
 * The executor seam (specification §Tool loop): how one response becomes content and tool calls. Native responses are
 * used as they are; in text mode `<tool_call>` blocks are extracted from the content (native calls, if a server sends
 * them anyway, are kept too).
 */
export function extractToolCalls(
  response: ChatResponse,
  protocol: ToolProtocol,
  round: number,
): { content: string; toolCalls: TextToolCall[] } {
  if (protocol !== 'text') return { content: response.content, toolCalls: response.toolCalls };
  const parsed = parseTextToolCalls(response.content, `call_${round}_`);
  return { content: parsed.content, toolCalls: [...response.toolCalls, ...parsed.toolCalls] };
}

function structured(call: TextToolCall): LlmToolCall {
  return { id: call.id, name: call.name, arguments: call.arguments };
}

function callLink(callId: number | undefined): { llmCallId?: number } {
  return callId === undefined ? {} : { llmCallId: callId };
}

interface ExecutedCall {
  call: LlmToolCall;
  result: ToolResult;
}

/** A response's tool calls as run, and the id of the provenance row their entry links to. */
interface Exchange {
  executed: ExecutedCall[];
  callId: number | undefined;
}

/**
 * The one way an exchange runs: its calls are recorded (with the model call's deferred provenance row, so the row
 * commits with the entry that links to it), then each tool runs and its result is recorded, in order.
 *
 * Whether a unit of work spans the exchange is decided once, before it runs: it does when every call is a
 * well-formed call of a `databaseOnly` tool (and the loop has `transaction`), so the calls, the tools' writes and
 * the results commit together and a crash leaves none of them (the turn runs again). Otherwise each record is its own
 * and each tool opens its own (a crash in between leaves the record of what was asked and what ran), and a tool that
 * may wait on a model or the network never holds a transaction.
 *
 * A failing tool's writes are never kept with its error result. Inside the exchange's unit of work, an error result
 * rolls the unit back and the same exchange runs again, that call's error result decided up front (each run
 * decides one more, so it ends). A unit of work that fails to commit (the database refused a write) runs again once.
 * The records are written once either way: nothing of a rolled-back run is kept.
 */
async function runToolCalls(
  options: ToolLoopOptions,
  extracted: { content: string; toolCalls: TextToolCall[] },
  response: ChatResponse,
): Promise<Exchange> {
  const { transaction } = options;
  const spanning =
    transaction !== undefined &&
    extracted.toolCalls.every((call) => call.parseError === undefined) &&
    options.registry.databaseOnly(
      extracted.toolCalls.map((call) => call.name),
      options.toolNames,
    );
  const unitOfWork = spanning ? transaction : <T>(work: () => Promise<T>) => work();
  const decided = new Map<number, ToolResult>();
  let failedCommits = 0;
  for (;;) {
    try {
      return await unitOfWork(() => runExchange(options, extracted, response, spanning ? decided : undefined));
    } catch (error) {
      if (error instanceof ToolFailed) {
        decided.set(error.index, error.result);
        continue;
      }
      failedCommits += 1;
      if (!spanning || failedCommits > 1) throw error;
    }
  }
}

/**
 * Runs one exchange in whatever unit of work is open around it. `decided`, given only inside the exchange's own unit
 * of work, holds the error results of calls that failed in an earlier run: they are recorded without running again,
 * and a new error result throws {@link ToolFailed} to roll the unit back.
 */
async function runExchange(
  options: ToolLoopOptions,
  extracted: { content: string; toolCalls: TextToolCall[] },
  response: ChatResponse,
  decided: Map<number, ToolResult> | undefined,
): Promise<Exchange> {
  const calls = extracted.toolCalls.map(structured);
  const record = <T>(work: () => Promise<T>): Promise<T> => (options.transaction ? options.transaction(work) : work());
  const callId = await record(async () => {
    const id = response.callId ?? (options.transaction ? await response.recordProvenance?.() : undefined);
    await options.recorder.assistantToolCalls(extracted.content, calls, response.model, id);
    return id;
  });
  const executed: ExecutedCall[] = [];
  for (const [index, textCall] of extracted.toolCalls.entries()) {
    const call = structured(textCall);
    const started = options.now();
    const result =
      decided?.get(index) ??
      (textCall.parseError !== undefined
        ? errorResult(textCall.parseError, {
            expected_format: '<tool_call>{"name": "…", "arguments": {…}}</tool_call>',
          })
        : await options.registry.execute(call, options.context, options.toolNames));
    if (decided && result.status === 'error' && !decided.has(index)) throw new ToolFailed(index, result);
    await options.recorder.toolResult(call, result, options.now() - started);
    executed.push({ call, result });
  }
  return { executed, callId };
}

export async function runToolLoop(options: ToolLoopOptions): Promise<ToolLoopResult> {
  const maxRounds = options.maxRounds ?? MAX_TOOL_ROUNDS;
  const protocol = options.toolProtocol ?? 'native';
  const fallbackText = options.fallbackText ?? FALLBACK_TEXT;
  const tools = protocol === 'text' ? [] : options.registry.definitions(options.toolNames);
  const loopMessages: ChatMessage[] = [];
  const toolCalls: ExecutedToolCall[] = [];
  const reasoning: string[] = [];
  let model: string | undefined;
  const finish = (
    outcome: ToolLoopOutcome,
    content: string,
    rounds: number,
    extra: Pick<ToolLoopResult, 'llmCallId' | 'recordProvenance' | 'error'> = {},
  ): ToolLoopResult => ({ content, outcome, rounds, toolCalls, reasoning, model, ...extra });

  for (let round = 1; round <= maxRounds; round += 1) {
    let response: Awaited<ReturnType<LlmClient['chat']>>;
    try {
      response = await options.llm.chat({
        messages: options.buildMessages(loopMessages),
        ...(tools.length > 0 ? { tools } : {}),
        purpose: options.purpose,
        participantId: options.context.participantId,
        // With a transaction to write it in, the provenance row commits with what the response produced.
        ...(options.transaction ? { deferProvenance: true } : {}),
      });
    } catch (error) {
      return finish('llm_error', fallbackText.llmUnavailable, round, { error: errorMessage(error) });
    }
    model = response.model;
    if (response.reasoning) reasoning.push(response.reasoning);
    const extracted = extractToolCalls(response, protocol, round);
    const content = extracted.content.trim();

    if (extracted.toolCalls.length > 0) {
      const calls = extracted.toolCalls.map(structured);
      const exchange = await runToolCalls(options, extracted, response);
      loopMessages.push({ role: 'assistant', content: extracted.content, toolCalls: calls });
      // All calls of one response run, in order: a multi-intent message can save a field and schedule at once.
      for (const { call, result } of exchange.executed) {
        toolCalls.push({ name: call.name, status: result.status });
        loopMessages.push({ role: 'tool', toolCallId: call.id, content: JSON.stringify(result) });
      }
      if (content) return finish('content', content, round, callLink(exchange.callId));
      continue;
    }
    const provenance = response.recordProvenance ? { recordProvenance: response.recordProvenance } : {};
    if (content) return finish('content', content, round, { ...callLink(response.callId), ...provenance });
    return finish('empty_response', fallbackText.emptyResponse, round, provenance);
  }
  return finish('rounds_exhausted', fallbackText.roundsExhausted, maxRounds);
}
