/**
 * Records every LLM call in the metrics (count, latency, tokens, errors) around any {@link LlmClient}. Latency is
 * wall-clock time, measured with `performance.now()` rather than the injected clock: a manual study clock does not
 * move while the model thinks.
 */
import { AppError } from '../domain/errors.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { LlmClient } from './llm.ts';

export function createMeteredLlm(options: { llm: LlmClient; metrics: Pick<Metrics, 'recordLlmCall'> }): LlmClient {
  const { llm, metrics } = options;
  return {
    model: llm.model,
    async chat(request, callOptions) {
      const purpose = request.purpose ?? 'unspecified';
      const started = performance.now();
      const seconds = (): number => (performance.now() - started) / 1000;
      try {
        const response = await llm.chat(request, callOptions);
        metrics.recordLlmCall({
          purpose,
          model: response.model || llm.model,
          outcome: 'success',
          durationSeconds: seconds(),
          ...(response.usage
            ? { promptTokens: response.usage.promptTokens, completionTokens: response.usage.completionTokens }
            : {}),
        });
        return response;
      } catch (error) {
        metrics.recordLlmCall({
          purpose,
          model: llm.model,
          outcome: 'error',
          durationSeconds: seconds(),
          errorCode: error instanceof AppError ? error.code : 'unknown',
        });
        throw error;
      }
    },
  };
}
