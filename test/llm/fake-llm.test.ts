import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import { createFakeLlm, FAKE_LLM_MODEL } from '../../src/llm/fake-llm.ts';
import type { ChatRequest } from '../../src/llm/llm.ts';

const request = (content: string): ChatRequest => ({ messages: [{ role: 'user', content }], purpose: 'intake' });

describe('createFakeLlm', () => {
  it('returns scripted responses in order, filling in defaults', async () => {
    const llm = createFakeLlm([{ content: 'first' }, { toolCalls: [{ name: 'scheduler' }] }, {}]);
    expect(await llm.chat(request('a'))).toEqual({ content: 'first', toolCalls: [], model: FAKE_LLM_MODEL });
    expect(await llm.chat(request('b'))).toEqual({
      content: '',
      toolCalls: [{ id: 'call_1', name: 'scheduler', arguments: '{}' }],
      model: FAKE_LLM_MODEL,
    });
    expect(await llm.chat(request('c'))).toEqual({ content: '', toolCalls: [], model: FAKE_LLM_MODEL });
    expect(llm.remaining).toBe(0);
  });

  it('numbers default tool call ids across the whole script and keeps given ids and raw arguments', async () => {
    const llm = createFakeLlm([
      {
        toolCalls: [
          { name: 'a', arguments: { x: 1 } },
          { name: 'b', id: 'mine', arguments: '{ "raw" :true}' },
        ],
      },
      {
        toolCalls: [{ name: 'c' }],
        reasoning: 'because',
        usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 },
      },
    ]);
    const first = await llm.chat(request('a'));
    const second = await llm.chat(request('b'));
    expect(first.toolCalls).toEqual([
      { id: 'call_1', name: 'a', arguments: '{"x":1}' },
      { id: 'mine', name: 'b', arguments: '{ "raw" :true}' },
    ]);
    expect(second.toolCalls).toEqual([{ id: 'call_3', name: 'c', arguments: '{}' }]);
    expect(second.reasoning).toBe('because');
    expect(second.usage).toEqual({ promptTokens: 1, completionTokens: 2, totalTokens: 3 });
  });

  it('records deep copies of every request', async () => {
    const llm = createFakeLlm([{ content: 'ok' }, { content: 'ok' }]);
    const sent = request('original');
    await llm.chat(sent);
    sent.messages.push({ role: 'assistant', content: 'mutated later' });
    await llm.chat(request('second'));
    expect(llm.requests).toHaveLength(2);
    expect(llm.requests[0]).toEqual(request('original'));
    expect(llm.requests[0]).not.toBe(sent);
    expect(llm.requests[1]?.messages[0]?.content).toBe('second');
  });

  it('lets a step be a function of the request', async () => {
    const llm = createFakeLlm([(received) => ({ content: `echo: ${received.messages.at(-1)?.content}` })]);
    expect((await llm.chat(request('ping'))).content).toBe('echo: ping');
  });

  it('accepts one responder function for every call', async () => {
    const llm = createFakeLlm((received, callIndex) => ({ content: `${callIndex}:${received.purpose}` }));
    expect((await llm.chat(request('a'))).content).toBe('0:intake');
    expect((await llm.chat(request('b'))).content).toBe('1:intake');
    expect(llm.remaining).toBe(0);
  });

  it('rejects with a queued error and records the request', async () => {
    const failure = new AppError('llm_error', 'provider down');
    const llm = createFakeLlm([{ error: failure }, { content: 'back' }]);
    await expect(llm.chat(request('a'))).rejects.toBe(failure);
    expect((await llm.chat(request('b'))).content).toBe('back');
    expect(llm.requests).toHaveLength(2);
  });

  it('fails loudly when the script is exhausted', async () => {
    const llm = createFakeLlm([{ content: 'only one' }]);
    await llm.chat(request('a'));
    await expect(llm.chat(request('what now?'))).rejects.toThrow(
      /Fake LLM script exhausted: call 2 has no scripted response \(1 consumed; purpose intake, last message user: "what now\?"\)/,
    );
  });

  it('can be extended with push', async () => {
    const llm = createFakeLlm([]);
    llm.push({ content: 'late' });
    expect(llm.remaining).toBe(1);
    expect((await llm.chat(request('a'))).content).toBe('late');
  });

  it('uses the configured model name', async () => {
    const llm = createFakeLlm([{ content: 'x' }, { content: 'y', model: 'override' }], { model: 'gpt-test' });
    expect(llm.model).toBe('gpt-test');
    expect((await llm.chat(request('a'))).model).toBe('gpt-test');
    expect((await llm.chat(request('b'))).model).toBe('override');
  });

  it('rejects an already aborted call', async () => {
    const controller = new AbortController();
    controller.abort();
    const llm = createFakeLlm([{ content: 'never' }]);
    await expect(llm.chat(request('a'), { signal: controller.signal })).rejects.toMatchObject({ code: 'llm_error' });
  });
});
