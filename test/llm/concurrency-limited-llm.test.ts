import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import { createConcurrencyLimitedLlm } from '../../src/llm/concurrency-limited-llm.ts';
import type { ChatResponse, LlmClient } from '../../src/llm/llm.ts';
import { createMeteredLlm } from '../../src/llm/metered-llm.ts';
import { createUnavailableLlm } from '../../src/llm/unavailable-llm.ts';
import { createMetrics } from '../../src/observability/metrics.ts';

/** An LLM whose calls finish only when the test releases them, counting how many run at once. */
function controllableLlm() {
  const pending: Array<{ label: string; release: () => void }> = [];
  let running = 0;
  let peak = 0;
  const llm: LlmClient = {
    model: 'controlled',
    async chat(request): Promise<ChatResponse> {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise<void>((resolve) => pending.push({ label: request.purpose ?? '', release: resolve }));
      running -= 1;
      return { content: request.purpose ?? '', toolCalls: [], model: 'controlled' };
    },
  };
  return {
    llm,
    pending,
    peak: () => peak,
    async releaseFirst() {
      pending.shift()?.release();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('createConcurrencyLimitedLlm', () => {
  it('runs at most maxConcurrency calls at once, the rest in FIFO order', async () => {
    const inner = controllableLlm();
    const limited = createConcurrencyLimitedLlm({ llm: inner.llm, maxConcurrency: 2 });
    const calls = ['a', 'b', 'c', 'd'].map((purpose) => limited.chat({ messages: [], purpose }));
    await settle();
    expect(inner.pending.map((call) => call.label)).toEqual(['a', 'b']);
    expect(limited.waiting).toBe(2);
    await inner.releaseFirst();
    expect(inner.pending.map((call) => call.label)).toEqual(['b', 'c']);
    await inner.releaseFirst();
    await inner.releaseFirst();
    await inner.releaseFirst();
    expect((await Promise.all(calls)).map((response) => response.content)).toEqual(['a', 'b', 'c', 'd']);
    expect(inner.peak()).toBe(2);
    expect(limited.active).toBe(0);
  });

  it('frees the slot when a call fails', async () => {
    let calls = 0;
    const failing: LlmClient = {
      model: 'm',
      async chat() {
        calls += 1;
        if (calls === 1) throw new AppError('llm_error', 'boom');
        return { content: 'ok', toolCalls: [], model: 'm' };
      },
    };
    const limited = createConcurrencyLimitedLlm({ llm: failing, maxConcurrency: 1 });
    await expect(limited.chat({ messages: [] })).rejects.toThrow('boom');
    await expect(limited.chat({ messages: [] })).resolves.toMatchObject({ content: 'ok' });
    expect(limited.active).toBe(0);
  });

  it('lets an aborted waiter leave the queue without taking a slot', async () => {
    const inner = controllableLlm();
    const limited = createConcurrencyLimitedLlm({ llm: inner.llm, maxConcurrency: 1 });
    const first = limited.chat({ messages: [], purpose: 'first' });
    const controller = new AbortController();
    const aborted = limited.chat({ messages: [], purpose: 'aborted' }, { signal: controller.signal });
    const third = limited.chat({ messages: [], purpose: 'third' });
    await settle();
    controller.abort();
    await expect(aborted).rejects.toThrow('aborted while waiting');
    await inner.releaseFirst();
    expect(inner.pending.map((call) => call.label)).toEqual(['third']);
    await inner.releaseFirst();
    await Promise.all([first, third]);
    expect(limited.active).toBe(0);
  });

  it('refuses a limit below 1', () => {
    expect(() => createConcurrencyLimitedLlm({ llm: createUnavailableLlm(), maxConcurrency: 0 })).toThrow(
      'positive integer',
    );
  });
});

describe('createMeteredLlm', () => {
  it('counts calls, tokens and errors', async () => {
    const metrics = createMetrics();
    let fail = false;
    const inner: LlmClient = {
      model: 'gpt-test',
      async chat() {
        if (fail) throw new AppError('llm_error', 'provider down');
        return {
          content: 'hi',
          toolCalls: [],
          model: 'gpt-test',
          usage: { promptTokens: 50, completionTokens: 5, totalTokens: 55 },
        };
      },
    };
    const metered = createMeteredLlm({ llm: inner, metrics });
    await metered.chat({ messages: [], purpose: 'intake' });
    fail = true;
    await expect(metered.chat({ messages: [], purpose: 'intake' })).rejects.toThrow('provider down');
    const text = await metrics.registry.metrics();
    expect(text).toContain('promptpipe_llm_calls_total{purpose="intake",model="gpt-test",outcome="success"} 1');
    expect(text).toContain('promptpipe_llm_calls_total{purpose="intake",model="gpt-test",outcome="error"} 1');
    expect(text).toContain('promptpipe_llm_tokens_total{purpose="intake",model="gpt-test",type="completion"} 5');
    expect(text).toContain('promptpipe_llm_errors_total{purpose="intake",code="llm_error"} 1');
    expect(text).toContain('promptpipe_llm_call_duration_seconds_count{purpose="intake",outcome="success"} 1');
  });
});

describe('createUnavailableLlm', () => {
  it('rejects every call with an explicit "unavailable" error', async () => {
    const call = createUnavailableLlm().chat({ messages: [] });
    await expect(call).rejects.toMatchObject({ code: 'unavailable' });
    await expect(call).rejects.toThrow('No LLM is configured');
  });
});
