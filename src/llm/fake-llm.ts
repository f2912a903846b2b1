/**
 * A scripted {@link LlmClient} for tests: returns canned responses in order and records every request, so a test
 * can drive a whole conversation without a model and then assert on exactly what the model was sent.
 */
import { AppError } from '../domain/errors.ts';
import type { ChatRequest, ChatResponse, LlmClient, LlmToolCall, TokenUsage } from './llm.ts';
import type { ToolProtocol } from './text-tool-protocol.ts';

/** A tool call in a script: the id defaults to `call_<n>`, the arguments to `{}`; objects are JSON-encoded. */
export interface FakeToolCall {
  id?: string;
  name: string;
  arguments?: string | Record<string, unknown>;
}

/** A canned reply; every field is optional (`content` defaults to ''). */
export interface FakeReply {
  content?: string;
  toolCalls?: FakeToolCall[];
  reasoning?: string;
  usage?: TokenUsage;
  model?: string;
}

/** Makes the call reject with this error instead, to simulate a failing provider. */
export interface FakeFailure {
  error: Error;
}

export type FakeOutcome = FakeReply | FakeFailure;
export type FakeStep = FakeOutcome | ((request: ChatRequest) => FakeOutcome | Promise<FakeOutcome>);
/** A single function answers every call; `callIndex` counts from 0. */
export type FakeResponder = (request: ChatRequest, callIndex: number) => FakeOutcome | Promise<FakeOutcome>;

export interface FakeLlm extends LlmClient {
  /** Every request received, deep-copied at call time, in order. */
  readonly requests: ChatRequest[];
  /** Scripted steps not yet consumed (always 0 for a responder function). */
  readonly remaining: number;
  /** Appends steps to the script. */
  push(...steps: FakeStep[]): void;
}

export const FAKE_LLM_MODEL = 'fake-llm';

function isFailure(outcome: FakeOutcome): outcome is FakeFailure {
  return 'error' in outcome && outcome.error instanceof Error;
}

function describeRequest(request: ChatRequest): string {
  const lastMessage = request.messages.at(-1);
  const last = lastMessage ? `${lastMessage.role}: ${JSON.stringify(lastMessage.content.slice(0, 120))}` : 'none';
  return `purpose ${request.purpose ?? '(none)'}, last message ${last}`;
}

/**
 * Creates a fake LLM from a script of steps consumed one per call (a step is a reply, a failure, or a function of
 * the request returning either), or from one function that answers every call. When the script runs out the call
 * rejects with an error naming the call number and the request, so a test fails loudly rather than hanging.
 */
/**
 * Renders a reply the way a model without native tool calling writes it: the scripted tool calls become
 * `<tool_call>{"name": …, "arguments": …}</tool_call>` blocks after the content (ids are the loop's to assign,
 * so scripted ids are not written), and the response carries no structured tool calls.
 */
export function toTextProtocolReply(reply: FakeReply): FakeReply {
  const calls = reply.toolCalls ?? [];
  if (calls.length === 0) return reply;
  const blocks = calls.map((call) => {
    const callArguments = call.arguments ?? {};
    let value: unknown = callArguments;
    if (typeof callArguments === 'string') {
      try {
        value = JSON.parse(callArguments);
      } catch {
        // Malformed JSON stays malformed inside the tags, so the model gets the same error back.
        return `<tool_call>{"name": ${JSON.stringify(call.name)}, "arguments": ${callArguments}}</tool_call>`;
      }
    }
    return `<tool_call>${JSON.stringify({ name: call.name, arguments: value })}</tool_call>`;
  });
  const { toolCalls: _calls, ...rest } = reply;
  const content = reply.content ?? '';
  return { ...rest, content: content ? `${content}\n${blocks.join('\n')}` : blocks.join('\n') };
}

export function createFakeLlm(
  script: FakeStep[] | FakeResponder,
  options: { model?: string; toolProtocol?: ToolProtocol } = {},
): FakeLlm {
  const model = options.model ?? FAKE_LLM_MODEL;
  const steps: FakeStep[] = typeof script === 'function' ? [] : [...script];
  const requests: ChatRequest[] = [];
  let toolCallCount = 0;

  function toToolCall(call: FakeToolCall): LlmToolCall {
    toolCallCount += 1;
    const callArguments = call.arguments ?? '{}';
    return {
      id: call.id ?? `call_${toolCallCount}`,
      name: call.name,
      arguments: typeof callArguments === 'string' ? callArguments : JSON.stringify(callArguments),
    };
  }

  function toResponse(reply: FakeReply): ChatResponse {
    const response: ChatResponse = {
      content: reply.content ?? '',
      toolCalls: (reply.toolCalls ?? []).map(toToolCall),
      model: reply.model ?? model,
    };
    if (reply.reasoning !== undefined) response.reasoning = reply.reasoning;
    if (reply.usage !== undefined) response.usage = { ...reply.usage };
    return response;
  }

  async function nextOutcome(request: ChatRequest, callIndex: number): Promise<FakeOutcome> {
    if (typeof script === 'function') return script(request, callIndex);
    const step = steps.shift();
    if (step === undefined) {
      throw new Error(
        `Fake LLM script exhausted: call ${callIndex + 1} has no scripted response ` +
          `(${callIndex} consumed; ${describeRequest(request)})`,
      );
    }
    return typeof step === 'function' ? step(request) : step;
  }

  return {
    model,
    requests,
    get remaining() {
      return steps.length;
    },
    push(...more) {
      steps.push(...more);
    },
    async chat(request, callOptions) {
      const callIndex = requests.length;
      requests.push(structuredClone(request));
      if (callOptions?.signal?.aborted) throw new AppError('llm_error', 'LLM request aborted');
      const outcome = await nextOutcome(request, callIndex);
      if (isFailure(outcome)) throw outcome.error;
      return toResponse(options.toolProtocol === 'text' ? toTextProtocolReply(outcome) : outcome);
    },
  };
}
