import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAiCompatibleLlm } from '../../src/llm/openai-compatible-llm.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';

let server: ScriptedOpenAiServer;
afterEach(async () => {
  await server.close();
});

function llmFor(baseUrl: string, maxRetries = 0) {
  return createOpenAiCompatibleLlm({ baseUrl, model: 'test-model', temperature: 0.1, timeoutMs: 2000, maxRetries });
}

describe('the scripted OpenAI-compatible server', () => {
  it('answers the real adapter by a function of the request, and records the request', async () => {
    server = await startScriptedOpenAiServer({
      respond: (request) =>
        request.lastMessage?.role === 'tool'
          ? { content: 'Saved!' }
          : { toolCalls: [{ name: 'save_user_profile', arguments: { habit_domain: 'walking' } }] },
    });
    const llm = llmFor(server.baseUrl);
    const tools = [{ name: 'save_user_profile', description: 'save', parameters: { type: 'object' } }];
    const first = await llm.chat({ messages: [{ role: 'user', content: 'I want to walk' }], tools });
    expect(first.toolCalls).toEqual([
      { id: 'call_1', name: 'save_user_profile', arguments: '{"habit_domain":"walking"}' },
    ]);
    const second = await llm.chat({
      messages: [
        { role: 'user', content: 'I want to walk' },
        { role: 'assistant', content: '', toolCalls: first.toolCalls },
        { role: 'tool', toolCallId: 'call_1', content: '{"status":"success"}' },
      ],
      tools,
    });
    expect(second).toMatchObject({ content: 'Saved!', toolCalls: [], usage: { totalTokens: 15 } });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]?.toolNames).toEqual(['save_user_profile']);
    expect(server.requests[0]?.body.model).toBe('test-model');
    expect(server.requests[1]?.body.messages[1]?.tool_calls?.[0]?.function.name).toBe('save_user_profile');
  });

  it('can answer with an HTTP error, which the adapter retries', async () => {
    server = await startScriptedOpenAiServer({
      respond: (_request, index) => (index === 0 ? { status: 503, error: 'overloaded' } : { content: 'ok' }),
    });
    const response = await llmFor(server.baseUrl, 1).chat({ messages: [{ role: 'user', content: 'hi' }] });
    expect(response.content).toBe('ok');
    expect(server.requests).toHaveLength(2);
  });

  it('reports an error when the script says so', async () => {
    server = await startScriptedOpenAiServer({ respond: () => ({ status: 400, error: 'bad tool schema' }) });
    await expect(llmFor(server.baseUrl).chat({ messages: [{ role: 'user', content: 'hi' }] })).rejects.toThrow(
      'bad tool schema',
    );
  });
});
