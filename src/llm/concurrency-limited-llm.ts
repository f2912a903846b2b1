/**
 * `LLM_MAX_CONCURRENCY`: a semaphore around any {@link LlmClient}. Turns of different participants run concurrently,
 * but a study with hundreds of participants answering at once must not open hundreds of requests to a rate-limited
 * (or local, single-GPU) model server. Calls beyond the limit wait in FIFO order for a free slot.
 */
import { AppError } from '../domain/errors.ts';
import type { ChatRequest, ChatResponse, LlmClient } from './llm.ts';

export interface ConcurrencyLimitedLlm extends LlmClient {
  /** Calls currently running against the wrapped client. */
  readonly active: number;
  /** Calls waiting for a slot. */
  readonly waiting: number;
}

export function createConcurrencyLimitedLlm(options: {
  llm: LlmClient;
  maxConcurrency: number;
}): ConcurrencyLimitedLlm {
  const { llm } = options;
  if (!Number.isInteger(options.maxConcurrency) || options.maxConcurrency < 1) {
    throw new AppError('invalid_input', `maxConcurrency must be a positive integer (got ${options.maxConcurrency})`);
  }
  const maxConcurrency = options.maxConcurrency;
  let active = 0;
  const queue: Array<() => void> = [];

  function acquire(signal: AbortSignal | undefined): Promise<void> {
    if (active < maxConcurrency) {
      active += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      // An aborted waiter leaves the queue without ever holding a slot, so it must not release one.
      const onAbort = (): void => {
        const index = queue.indexOf(grant);
        if (index >= 0) queue.splice(index, 1);
        reject(
          new AppError('unavailable', 'LLM call aborted while waiting for a free slot', { cause: signal?.reason }),
        );
      };
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(grant);
    });
  }

  function release(): void {
    const next = queue.shift();
    // The slot passes straight to the next waiter: `active` stays the same, so no newcomer can overtake it.
    if (next) next();
    else active -= 1;
  }

  return {
    model: llm.model,
    get active() {
      return active;
    },
    get waiting() {
      return queue.length;
    },
    async chat(request: ChatRequest, callOptions?: { signal?: AbortSignal }): Promise<ChatResponse> {
      await acquire(callOptions?.signal);
      try {
        return await llm.chat(request, callOptions);
      } finally {
        release();
      }
    },
  };
}
