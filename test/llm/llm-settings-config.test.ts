import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

describe('LLM settings (issue 10)', () => {
  it('defaults: native protocol, temperature 0.1, no max tokens or extra body, 1h outage retry, the notice from the catalogue', () => {
    const { llm } = loadConfig({});
    expect(llm).toMatchObject({
      toolProtocol: 'native',
      temperature: 0.1,
      maxTokens: undefined,
      extraBody: undefined,
      outageRetryForMs: 3_600_000,
      outageNotice: undefined,
      circuitBreakerThreshold: 5,
      circuitBreakerCooldownMs: 30_000,
    });
  });

  it('reads the text protocol, max tokens, extra body, an empty temperature and an empty notice', () => {
    const { llm } = loadConfig({
      LLM_TOOL_PROTOCOL: 'text',
      LLM_MAX_TOKENS: '256',
      LLM_EXTRA_BODY: '{"top_k": 20, "chat_template_kwargs": {"enable_thinking": false}}',
      GENAI_TEMPERATURE: '',
      LLM_OUTAGE_NOTICE: '',
      LLM_OUTAGE_RETRY_FOR: '2h',
    });
    expect(llm).toMatchObject({
      toolProtocol: 'text',
      maxTokens: 256,
      extraBody: { top_k: 20, chat_template_kwargs: { enable_thinking: false } },
      temperature: undefined,
      outageNotice: '',
      outageRetryForMs: 7_200_000,
    });
  });

  it('refuses to start on invalid values, naming the variable', () => {
    expect(() => loadConfig({ LLM_EXTRA_BODY: '{top_k: 20' })).toThrow(/LLM_EXTRA_BODY/);
    expect(() => loadConfig({ LLM_EXTRA_BODY: '[1, 2]' })).toThrow(/LLM_EXTRA_BODY/);
    expect(() => loadConfig({ LLM_TOOL_PROTOCOL: 'xml' })).toThrow(/LLM_TOOL_PROTOCOL/);
    expect(() => loadConfig({ LLM_MAX_TOKENS: '-3' })).toThrow(/LLM_MAX_TOKENS/);
  });
});
