/**
 * The LLM used when none is configured (neither `OPENAI_API_KEY` nor `OPENAI_BASE_URL`): every call rejects with
 * `AppError('unavailable')`, so the server still starts, enrolls and records messages, and turns answer with the
 * engine's explicit "assistant unavailable" fallback while the error is logged.
 */
import { AppError } from '../domain/errors.ts';
import type { LlmClient } from './llm.ts';

export const LLM_NOT_CONFIGURED_MESSAGE =
  'No LLM is configured: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (Ollama, vLLM, any OpenAI-compatible server)';

export function createUnavailableLlm(): LlmClient {
  return {
    model: 'unavailable',
    async chat() {
      throw new AppError('unavailable', LLM_NOT_CONFIGURED_MESSAGE);
    },
  };
}
