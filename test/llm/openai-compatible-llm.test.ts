import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import type { ChatRequest } from '../../src/llm/llm.ts';
import { createOpenAiCompatibleLlm, type OpenAiCompatibleLlmOptions } from '../../src/llm/openai-compatible-llm.ts';

/** One canned HTTP answer of the stub server. `hang` never answers (for timeouts). */
interface StubAnswer {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  hang?: boolean;
}

interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  raw: string;
}

interface StubServer {
  baseUrl: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/** A tiny OpenAI chat-completions server on localhost: answers requests from the queue, in order. */
async function startStubServer(answers: StubAnswer[]): Promise<StubServer> {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk) => {
      raw += chunk;
    });
    request.on('end', () => {
      received.push({ path: request.url ?? '', headers: request.headers, body: JSON.parse(raw), raw });
      const answer = answers.shift() ?? { status: 599, body: { error: { message: 'stub: no answer queued' } } };
      if (answer.hang) return;
      response.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
      response.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function completion(message: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'served-model',
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: null, ...message } }],
    ...extra,
  };
}

/** Retry quickly: the SDK honours `retry-after-ms`. */
const RETRY_NOW = { 'retry-after-ms': '5' };

let server: StubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function llmAgainst(answers: StubAnswer[], overrides: Partial<OpenAiCompatibleLlmOptions> = {}) {
  server = await startStubServer(answers);
  return createOpenAiCompatibleLlm({
    apiKey: 'test-key',
    baseUrl: server.baseUrl,
    model: 'test-model',
    temperature: 0.1,
    timeoutMs: 2_000,
    maxRetries: 2,
    ...overrides,
  });
}

const simpleRequest: ChatRequest = { messages: [{ role: 'user', content: 'hi' }] };

describe('createOpenAiCompatibleLlm', () => {
  it('maps messages, tools and temperature onto the chat-completions request', async () => {
    const llm = await llmAgainst([{ body: completion({ content: 'hello' }) }]);
    const argumentsText = '{"habit":"walk",  "minutes": 10}';
    await llm.chat({
      messages: [
        { role: 'system', content: 'be kind' },
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'call_a', name: 'save_user_profile', arguments: argumentsText }],
        },
        { role: 'tool', toolCallId: 'call_a', content: 'saved' },
        { role: 'assistant', content: 'Noted!' },
      ],
      tools: [{ name: 'save_user_profile', description: 'Saves.', parameters: { type: 'object', properties: {} } }],
      temperature: 0.7,
    });
    const sent = server!.received[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers['authorization']).toBe('Bearer test-key');
    expect(sent.body).toEqual({
      model: 'test-model',
      temperature: 0.7,
      messages: [
        { role: 'system', content: 'be kind' },
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'save_user_profile', arguments: argumentsText } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: 'saved' },
        { role: 'assistant', content: 'Noted!' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'save_user_profile',
            description: 'Saves.',
            parameters: { type: 'object', properties: {} },
          },
        },
      ],
    });
  });

  it("sends JSON with the request's tools over any in the extra body, the same for the same definitions", async () => {
    const answers = [{ body: completion({ content: 'one' }) }, { body: completion({ content: 'two' }) }];
    const llm = await llmAgainst(answers, {
      extraBody: { top_k: 20, tools: [{ type: 'function', function: { name: 'stale' } }] },
      maxTokens: 64,
    });
    const tool = { name: 'scheduler', description: 'Says "when".\n', parameters: { type: 'object', properties: {} } };
    await llm.chat({ messages: [{ role: 'user', content: 'first' }], tools: [tool] });
    await llm.chat({ messages: [{ role: 'user', content: 'second "quoted"' }], tools: [tool] });
    const [first, second] = server!.received;
    expect(first!.headers['content-type']).toBe('application/json');
    expect(first!.raw.match(/"tools"/g)).toHaveLength(1);
    const expectedTools = [{ type: 'function', function: { ...tool } }];
    expect(first!.body).toEqual({
      top_k: 20,
      model: 'test-model',
      temperature: 0.1,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'first' }],
      tools: expectedTools,
    });
    expect(second!.body['messages']).toEqual([{ role: 'user', content: 'second "quoted"' }]);
    expect(second!.body['tools']).toEqual(expectedTools);
  });

  it('uses the configured temperature, omits an empty tool list, and sends a placeholder key when none is set', async () => {
    const llm = await llmAgainst([{ body: completion({ content: 'ok' }) }], { apiKey: undefined });
    await llm.chat({ ...simpleRequest, tools: [] });
    const sent = server!.received[0]!;
    expect(sent.body['temperature']).toBe(0.1);
    expect(sent.body).not.toHaveProperty('tools');
    expect(sent.headers['authorization']).toMatch(/^Bearer \S+/);
  });

  it('returns content, tool calls with byte-exact arguments, usage and the served model', async () => {
    const rawArguments = '{ "b": 2,"a" :1 , "text":"caf\\u00e9 ☕" }';
    const llm = await llmAgainst([
      {
        body: completion(
          {
            content: null,
            tool_calls: [
              { id: 'call_x', type: 'function', function: { name: 'scheduler', arguments: rawArguments } },
              { id: 'call_y', type: 'function', function: { name: 'transition_state', arguments: '' } },
            ],
          },
          { usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } },
        ),
      },
    ]);
    const response = await llm.chat(simpleRequest);
    expect(response).toEqual({
      content: '',
      toolCalls: [
        { id: 'call_x', name: 'scheduler', arguments: rawArguments },
        { id: 'call_y', name: 'transition_state', arguments: '' },
      ],
      usage: { promptTokens: 12, completionTokens: 5, totalTokens: 17 },
      model: 'served-model',
    });
  });

  it('extracts reasoning from reasoning_content or reasoning', async () => {
    const llm = await llmAgainst([
      { body: completion({ content: 'a', reasoning_content: 'thinking (deepseek)' }) },
      { body: completion({ content: 'b', reasoning: 'thinking (openrouter)' }) },
      { body: completion({ content: 'c' }) },
    ]);
    expect((await llm.chat(simpleRequest)).reasoning).toBe('thinking (deepseek)');
    expect((await llm.chat(simpleRequest)).reasoning).toBe('thinking (openrouter)');
    expect(await llm.chat(simpleRequest)).not.toHaveProperty('reasoning');
  });

  it('retries a 500 and then succeeds', async () => {
    const warnings: unknown[] = [];
    const llm = await llmAgainst(
      [
        { status: 500, body: { error: { message: 'upstream exploded' } }, headers: RETRY_NOW },
        { body: completion({ content: 'recovered' }) },
      ],
      { log: { warn: (details) => warnings.push(details) } },
    );
    const response = await llm.chat(simpleRequest);
    expect(response.content).toBe('recovered');
    expect(server!.received).toHaveLength(2);
    expect(warnings).toEqual([{ status: 500 }]);
  });

  it('retries a 429 rate limit', async () => {
    const llm = await llmAgainst([
      { status: 429, body: { error: { message: 'slow down' } }, headers: RETRY_NOW },
      { status: 429, body: { error: { message: 'slow down' } }, headers: RETRY_NOW },
      { body: completion({ content: 'finally' }) },
    ]);
    expect((await llm.chat(simpleRequest)).content).toBe('finally');
    expect(server!.received).toHaveLength(3);
  });

  it('gives up after the retry budget with an llm_error naming the status and provider message', async () => {
    const llm = await llmAgainst(
      [
        { status: 503, body: { error: { message: 'model is loading' } }, headers: RETRY_NOW },
        { status: 503, body: { error: { message: 'model is loading' } }, headers: RETRY_NOW },
      ],
      { maxRetries: 1 },
    );
    const error = await llm.chat(simpleRequest).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'llm_error', message: 'LLM request failed with status 503: model is loading' });
    expect(server!.received).toHaveLength(2);
  });

  it('does not retry a 400 and reports it', async () => {
    const llm = await llmAgainst([{ status: 400, body: { error: { message: "'messages' must not be empty" } } }]);
    await expect(llm.chat(simpleRequest)).rejects.toMatchObject({
      code: 'llm_error',
      message: "LLM request failed with status 400: 'messages' must not be empty",
      details: { kind: 'http', status: 400 },
    });
    expect(server!.received).toHaveLength(1);
  });

  it('turns a timeout into an llm_error', async () => {
    const llm = await llmAgainst([{ hang: true }], { timeoutMs: 100, maxRetries: 0 });
    await expect(llm.chat({ ...simpleRequest, purpose: 'intake' })).rejects.toMatchObject({
      code: 'llm_error',
      message: 'LLM request timed out after 100 ms per attempt',
      details: { kind: 'timeout', purpose: 'intake' },
    });
  });

  it('turns a refused connection into an llm_error', async () => {
    const closed = await startStubServer([]);
    await closed.close();
    const llm = createOpenAiCompatibleLlm({
      baseUrl: closed.baseUrl,
      model: 'm',
      temperature: 0,
      timeoutMs: 1_000,
      maxRetries: 0,
    });
    await expect(llm.chat(simpleRequest)).rejects.toMatchObject({
      code: 'llm_error',
      message: expect.stringMatching(/^LLM connection failed: .*ECONNREFUSED/),
    });
  });

  it('passes an abort signal through', async () => {
    const llm = await llmAgainst([{ hang: true }]);
    const controller = new AbortController();
    const pending = llm.chat(simpleRequest, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ code: 'llm_error', message: 'LLM request aborted' });
  });

  it('rejects a response without choices', async () => {
    const llm = await llmAgainst([{ body: { ...completion({}), choices: [] } }]);
    await expect(llm.chat(simpleRequest)).rejects.toMatchObject({
      code: 'llm_error',
      message: 'LLM response has no choices',
    });
  });
});
