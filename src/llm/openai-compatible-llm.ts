/**
 * The LLM port over any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, OpenRouter,
 * DeepSeek…), using the official `openai` package. The SDK owns timeouts and retries: it retries connection
 * failures, timeouts, 408, 409, 429 and 5xx with exponential back-off (honouring `retry-after` / `retry-after-ms`).
 */
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { AppError } from '../domain/errors.ts';
import type { Log } from '../domain/log.ts';
import { createHttpClient } from '../http/http-client.ts';
import type { ChatMessage, ChatResponse, LlmClient, LlmToolCall, ToolDefinition } from './llm.ts';

export interface OpenAiCompatibleLlmOptions {
  /** Optional: local servers (Ollama, llama.cpp) need none, so a placeholder is sent instead. */
  apiKey?: string | undefined;
  /** Defaults to OpenAI's public endpoint; e.g. `http://localhost:11434/v1` for Ollama. */
  baseUrl?: string | undefined;
  model: string;
  /** Undefined: no `temperature` is sent (reasoning models reject it). */
  temperature: number | undefined;
  /** Sent as `max_tokens` when set (`LLM_MAX_TOKENS`). */
  maxTokens?: number | undefined;
  /** Merged into every request body (`LLM_EXTRA_BODY`: vLLM, llama.cpp, Ollama options). */
  extraBody?: Record<string, unknown> | undefined;
  /** Per attempt; the SDK retries timed-out attempts too. */
  timeoutMs: number;
  /** Retries after the first attempt. */
  maxRetries: number;
  /** The adapter only warns (each failed attempt). */
  log?: Pick<Log, 'warn'>;
  /** The application's HTTP client (`createHttpClient`, made in main.ts); without one, a client of its own. */
  fetch?: typeof globalThis.fetch;
}

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
/** Sent when no key is configured; keyless servers ignore the Authorization header. */
const PLACEHOLDER_API_KEY = 'no-api-key';

/** Creates an {@link LlmClient} for an OpenAI-compatible endpoint. Reads nothing from the environment. */
export function createOpenAiCompatibleLlm(options: OpenAiCompatibleLlmOptions): LlmClient {
  const baseFetch = options.fetch ?? createHttpClient().fetch;
  const client = new OpenAI({
    apiKey: options.apiKey || PLACEHOLDER_API_KEY,
    // Explicit values everywhere, so the SDK never falls back to OPENAI_* environment variables.
    baseURL: options.baseUrl || OPENAI_DEFAULT_BASE_URL,
    organization: null,
    project: null,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
    logLevel: 'off',
    fetch: loggingFetch(baseFetch, options.log),
  });

  return {
    model: options.model,
    async chat(request, callOptions) {
      let completion: ChatCompletion;
      const temperature = request.temperature ?? options.temperature;
      const body = {
        ...(options.extraBody ?? {}),
        model: options.model,
        messages: request.messages.map(toOpenAiMessage),
        ...(temperature === undefined ? {} : { temperature }),
        ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
      };
      try {
        // `chat.completions.create` would serialise the body with a replacer called for every value in it (the SDK
        // watches for `stream`); the generic `post` sends our own encoding as it is, with the same retries and errors.
        completion = await client.post<ChatCompletion>('/chat/completions', {
          body: encodeChatBody(body, request.tools),
          headers: { 'content-type': 'application/json' },
          ...(callOptions?.signal ? { signal: callOptions.signal } : {}),
        });
      } catch (error) {
        throw toLlmError(error, options.timeoutMs, request.purpose);
      }
      return fromCompletion(completion, options.model);
    },
  };
}

/** Logs every failed attempt, including the ones the SDK goes on to retry, which it would otherwise hide. */
function loggingFetch(baseFetch: typeof globalThis.fetch, log: Pick<Log, 'warn'> | undefined): typeof globalThis.fetch {
  if (!log) return baseFetch;
  return async (input, init) => {
    const response = await baseFetch(input, init);
    if (!response.ok) log.warn({ status: response.status }, 'llm attempt failed');
    return response;
  };
}

export function toOpenAiMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    case 'assistant': {
      const toolCalls = message.toolCalls ?? [];
      if (toolCalls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        // Some servers reject '' next to tool calls; null is the documented "no text".
        content: message.content === '' ? null : message.content,
        tool_calls: toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        })),
      };
    }
  }
}

/** A tool definition's JSON, once per definition: the registry hands out the same objects every turn. */
const encodedTools = new WeakMap<ToolDefinition, string>();

function encodeTool(tool: ToolDefinition): string {
  let json = encodedTools.get(tool);
  if (json === undefined) {
    json = JSON.stringify(toOpenAiTool(tool));
    encodedTools.set(tool, json);
  }
  return json;
}

/**
 * The request body's JSON with the tools last, each tool's JSON made once: the four tools are about half of a
 * request's bytes and never change, so only the messages are serialised per call. Any `tools` in `body` (from
 * `LLM_EXTRA_BODY`) gives way to the request's, as it did when the request's were spread over it.
 */
export function encodeChatBody(body: object, tools: readonly ToolDefinition[] | undefined): string {
  if (!tools || tools.length === 0) return JSON.stringify(body);
  const { tools: _replaced, ...rest } = body as { tools?: unknown };
  const json = JSON.stringify(rest);
  return `${json.slice(0, -1)},"tools":[${tools.map(encodeTool).join(',')}]}`;
}

export function toOpenAiTool(tool: ToolDefinition): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/** Reasoning text as DeepSeek (`reasoning_content`) or vLLM/OpenRouter (`reasoning`) return it. */
function reasoningOf(message: object): string | undefined {
  const extra = message as { reasoning_content?: unknown; reasoning?: unknown };
  for (const value of [extra.reasoning_content, extra.reasoning]) {
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

export function fromCompletion(completion: ChatCompletion, fallbackModel: string): ChatResponse {
  const message = completion.choices?.[0]?.message;
  if (!message) throw new AppError('llm_error', 'LLM response has no choices', { details: { id: completion.id } });
  const toolCalls: LlmToolCall[] = [];
  for (const call of message.tool_calls ?? []) {
    if (call.type === 'function') {
      toolCalls.push({ id: call.id, name: call.function.name, arguments: call.function.arguments });
    }
  }
  const response: ChatResponse = {
    content: message.content ?? '',
    toolCalls,
    model: completion.model || fallbackModel,
  };
  const reasoning = reasoningOf(message);
  if (reasoning !== undefined) response.reasoning = reasoning;
  if (completion.usage) {
    response.usage = {
      promptTokens: completion.usage.prompt_tokens,
      completionTokens: completion.usage.completion_tokens,
      totalTokens: completion.usage.total_tokens,
    };
  }
  return response;
}

/** The provider's own message: `{"error":{"message":…}}` when it sent one, else the SDK's summary. */
function providerMessage(error: InstanceType<typeof OpenAI.APIError>): string {
  const body = error.error as { message?: unknown } | undefined;
  if (body && typeof body.message === 'string' && body.message !== '') return body.message;
  return error.message;
}

/** `fetch failed: connect ECONNREFUSED 127.0.0.1:1` rather than the SDK's bare "Connection error.". */
function causeChain(error: Error): string {
  const messages: string[] = [];
  for (let cause: unknown = error.cause; cause instanceof Error && messages.length < 4; cause = cause.cause) {
    messages.push(cause.message);
  }
  return messages.length > 0 ? messages.join(': ') : error.message;
}

/** Normalises whatever the SDK threw into `AppError('llm_error')` with a message naming the cause. */
export function toLlmError(error: unknown, timeoutMs: number, purpose?: string): AppError {
  const details: Record<string, unknown> = purpose === undefined ? {} : { purpose };
  if (error instanceof AppError) return error;
  if (error instanceof OpenAI.APIUserAbortError) {
    return new AppError('llm_error', 'LLM request aborted', { cause: error, details: { ...details, kind: 'aborted' } });
  }
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return new AppError('llm_error', `LLM request timed out after ${timeoutMs} ms per attempt`, {
      cause: error,
      details: { ...details, kind: 'timeout' },
    });
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return new AppError('llm_error', `LLM connection failed: ${causeChain(error)}`, {
      cause: error,
      details: { ...details, kind: 'connection' },
    });
  }
  if (error instanceof OpenAI.APIError) {
    const retryAfterMs = error.status === 429 ? parseRetryAfter(error.headers) : undefined;
    return new AppError('llm_error', `LLM request failed with status ${error.status}: ${providerMessage(error)}`, {
      cause: error,
      details: { ...details, kind: 'http', status: error.status, ...(retryAfterMs ? { retryAfterMs } : {}) },
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new AppError('llm_error', `LLM request failed: ${message}`, { cause: error, details });
}

/**
 * The wait a 429 asks for: `retry-after-ms`, or `Retry-After` in seconds or as an HTTP date. The SDK honours it
 * between its own retries; the circuit breaker honours it after they are spent.
 */
export function parseRetryAfter(headers: Headers | undefined, nowMs = Date.now()): number | undefined {
  const milliseconds = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(milliseconds) && milliseconds > 0) return milliseconds;
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds > 0 ? seconds * 1000 : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) || date <= nowMs ? undefined : date - nowMs;
}
