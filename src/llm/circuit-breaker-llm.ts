/**
 * A circuit breaker around any {@link LlmClient}: while the model keeps failing, calls back off instead of hammering
 * it, and `/health` can show the model as degraded.
 *
 * - closed: calls pass; each failed call (after the adapter's own retries) counts; a success resets the count.
 * - open: after `threshold` consecutive failures, or a 429 whose `Retry-After` names a wait, calls are refused at
 *   once with `AppError('unavailable')` until the cool-down (or the Retry-After time, whichever is later) has passed.
 * - half-open: then one call goes through; success closes the breaker, failure opens it again.
 * Time comes from the injected `now` (the study clock), so manual-clock tests move through cool-downs.
 */
import { AppError, errorMessage } from '../domain/errors.ts';
import type { LlmClient } from './llm.ts';

export interface LlmHealth {
  /**
   * `ok`: the last call succeeded (or none failed yet); `degraded`: failing or backing off; `not_configured`: no model
   * is set (no `OPENAI_API_KEY` nor `OPENAI_BASE_URL`), every turn answers "assistant unavailable".
   */
  status: 'ok' | 'degraded' | 'not_configured';
  consecutive_failures: number;
  /** Set while the breaker refuses calls. */
  retry_after?: string;
  last_error?: string;
  last_failure_at?: string;
}

export interface CircuitBreakerLlm extends LlmClient {
  health(): LlmHealth;
}

export interface CircuitBreakerOptions {
  llm: LlmClient;
  /** Consecutive failed calls that open the breaker (`LLM_CIRCUIT_BREAKER_THRESHOLD`). */
  threshold: number;
  /** How long an open breaker refuses calls (`LLM_CIRCUIT_BREAKER_COOLDOWN`). */
  cooldownMs: number;
  now: () => Date;
}

/** The wait a provider asked for: `details.retryAfterMs` set by the adapter from a 429's `Retry-After`. */
function retryAfterMsOf(error: unknown): number | undefined {
  if (!(error instanceof AppError)) return undefined;
  const details = error.details as { retryAfterMs?: unknown } | undefined;
  const value = details?.retryAfterMs;
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

export function createCircuitBreakerLlm(options: CircuitBreakerOptions): CircuitBreakerLlm {
  const { llm, threshold, cooldownMs, now } = options;
  let consecutiveFailures = 0;
  let openUntil: number | undefined;
  let lastError: string | undefined;
  let lastFailureAt: Date | undefined;

  return {
    model: llm.model,
    health() {
      const health: LlmHealth = {
        status: consecutiveFailures > 0 || openUntil !== undefined ? 'degraded' : 'ok',
        consecutive_failures: consecutiveFailures,
      };
      if (openUntil !== undefined && openUntil > now().getTime()) {
        health.retry_after = new Date(openUntil).toISOString();
      }
      if (lastError !== undefined) health.last_error = lastError;
      if (lastFailureAt !== undefined) health.last_failure_at = lastFailureAt.toISOString();
      return health;
    },
    async chat(request, callOptions) {
      const started = now().getTime();
      if (openUntil !== undefined && started < openUntil) {
        throw new AppError(
          'unavailable',
          `LLM calls are paused until ${new Date(openUntil).toISOString()} after ${consecutiveFailures} failures: ${lastError ?? ''}`,
          { details: { kind: 'circuit_open', retryAfterMs: openUntil - started } },
        );
      }
      try {
        const response = await llm.chat(request, callOptions);
        consecutiveFailures = 0;
        openUntil = undefined;
        lastError = undefined;
        return response;
      } catch (error) {
        const at = now().getTime();
        consecutiveFailures += 1;
        lastError = errorMessage(error);
        lastFailureAt = new Date(at);
        const retryAfter = retryAfterMsOf(error);
        const cooldown = consecutiveFailures >= threshold ? cooldownMs : 0;
        const wait = Math.max(cooldown, retryAfter ?? 0);
        if (wait > 0) openUntil = at + wait;
        throw error;
      }
    },
  };
}
