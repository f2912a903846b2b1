/**
 * Records the provenance of every LLM call in `llm_calls` around any {@link LlmClient}: model, provider host,
 * temperature, prompt version (hash of the system text actually sent) and file, token usage, latency and outcome.
 * The response carries the row's id (`callId`) so the transcript entries the call produced can point at it.
 *
 * Latency is wall-clock (`performance.now()`), like the metrics: a manual study clock does not move while the model
 * thinks. A failure to record never fails the call: provenance is logged as missing instead.
 */

import type { Clock } from '../../domain/clock.ts';
import { AppError, errorMessage } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import type { ChatRequest, LlmClient } from '../../llm/llm.ts';
import type { NewLlmCall, Store } from '../../store/store.ts';
import { type PromptSource, promptFileOf, promptVersion } from './prompt-version.ts';

export interface ProvenanceLlmOptions {
  llm: LlmClient;
  /** Where the rows go: a deferred row joins the unit of work open when the caller asks for it. */
  store: Pick<Store, 'llmCalls' | 'afterCommit'>;
  clock: Clock;
  /** The provider base URL's host, e.g. `api.openai.com`. */
  providerHost: string;
  /** The configured temperature (a request may override it). */
  temperature: number | undefined;
  prompts: readonly PromptSource[];
  log: Pick<Log, 'warn'>;
}

/** The host of a base URL (`http://localhost:11434/v1` → `localhost:11434`); the text itself when not a URL. */
export function providerHostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return baseUrl;
  }
}

function systemTextOf(request: ChatRequest): string | undefined {
  const parts = request.messages.filter((message) => message.role === 'system').map((message) => message.content);
  return parts.length > 0 ? parts.join('\n') : undefined;
}

export function createProvenanceLlm(options: ProvenanceLlmOptions): LlmClient {
  const { llm, store, clock, log } = options;

  async function record(call: NewLlmCall): Promise<number | undefined> {
    try {
      return await store.llmCalls.record(call);
    } catch (error) {
      log.warn({ error: errorMessage(error) }, 'could not record LLM call provenance');
      return undefined;
    }
  }

  /** The row of a successful call, written in the caller's unit of work (`ChatRequest.deferProvenance`). */
  function deferred(call: NewLlmCall): () => Promise<number | undefined> {
    let committedId: number | undefined;
    return async () => {
      if (committedId !== undefined) return committedId;
      try {
        const id = await store.llmCalls.record(call);
        store.afterCommit(() => {
          committedId = id;
        });
        return id;
      } catch (error) {
        log.warn({ error: errorMessage(error) }, 'could not record LLM call provenance');
        return undefined;
      }
    };
  }

  return {
    model: llm.model,
    async chat(request, callOptions) {
      const systemText = systemTextOf(request);
      const promptFile = systemText === undefined ? undefined : promptFileOf(systemText, options.prompts);
      const temperature = request.temperature ?? options.temperature;
      const base = {
        ...(request.participantId ? { participantId: request.participantId } : {}),
        purpose: request.purpose ?? 'unspecified',
        providerHost: options.providerHost,
        ...(temperature === undefined ? {} : { temperature }),
        ...(promptFile ? { promptFile } : {}),
        ...(systemText === undefined ? {} : { promptVersion: promptVersion(systemText) }),
      };
      const started = performance.now();
      try {
        const response = await llm.chat(request, callOptions);
        const call: NewLlmCall = {
          ...base,
          model: response.model || llm.model,
          ...(response.usage
            ? {
                promptTokens: response.usage.promptTokens,
                completionTokens: response.usage.completionTokens,
                totalTokens: response.usage.totalTokens,
              }
            : {}),
          latencyMs: performance.now() - started,
          outcome: 'success',
          createdAt: clock.now(),
        };
        if (request.deferProvenance) return { ...response, recordProvenance: deferred(call) };
        const callId = await record(call);
        return callId === undefined ? response : { ...response, callId };
      } catch (error) {
        await record({
          ...base,
          model: llm.model,
          latencyMs: performance.now() - started,
          outcome: error instanceof AppError ? error.code : 'error',
          error: errorMessage(error),
          createdAt: clock.now(),
        });
        throw error;
      }
    },
  };
}
