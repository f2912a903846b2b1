/**
 * The model: the OpenAI-compatible adapter (or "unavailable" without a key or a base URL), wrapped in provenance
 * (llm_calls), metrics, the concurrency limit and the circuit breaker; the system prompts and their recorded
 * versions.
 */
import type { Config } from '../config.ts';
import type { Log } from '../domain/log.ts';
import { loadLanguageSystemPrompts, loadSystemPrompts } from '../engine/system-prompts.ts';
import { type CircuitBreakerLlm, createCircuitBreakerLlm } from '../llm/circuit-breaker-llm.ts';
import { createConcurrencyLimitedLlm } from '../llm/concurrency-limited-llm.ts';
import type { LlmClient } from '../llm/llm.ts';
import { createMeteredLlm } from '../llm/metered-llm.ts';
import { createOpenAiCompatibleLlm, OPENAI_DEFAULT_BASE_URL } from '../llm/openai-compatible-llm.ts';
import { createUnavailableLlm, LLM_NOT_CONFIGURED_MESSAGE } from '../llm/unavailable-llm.ts';
import { languagePromptSources, type PromptSource, promptSources } from '../research/provenance/prompt-version.ts';
import { createProvenanceLlm, providerHostOf } from '../research/provenance/provenance-llm.ts';
import { armPromptSources } from '../trials/arm-settings.ts';
import type { Core } from './application.ts';
import type { Trials } from './trials.ts';

export interface Prompts {
  system: ReturnType<typeof loadSystemPrompts>;
  languages: ReturnType<typeof loadLanguageSystemPrompts>;
  /** What the startup record and every llm_calls row name as the prompts in use. */
  files: PromptSource[];
}

export function loadPrompts(config: Config, study: Trials['study']): Prompts {
  const system = loadSystemPrompts(config.prompts);
  const languages = loadLanguageSystemPrompts(config.prompts);
  const files: PromptSource[] = [
    ...promptSources([
      { path: config.prompts.intakeFile ?? 'intake.txt', text: system.intake },
      { path: config.prompts.feedbackFile ?? 'feedback.txt', text: system.feedback },
      { path: config.prompts.promptGeneratorFile ?? 'prompt-generator.txt', text: system.promptGenerator },
    ]),
    ...languagePromptSources([languages.intake, languages.feedback, languages.promptGenerator]),
    ...armPromptSources(study),
  ];
  return { system, languages, files };
}

/** Without a key or a base URL there is no model to call: turns answer "assistant unavailable". */
export function llmConfigured(config: Config): boolean {
  return Boolean(config.llm.apiKey || config.llm.baseUrl);
}

/** The coach's model, as every turn calls it. */
export function wireLlm(core: Core, prompts: Prompts, fetch: typeof globalThis.fetch): CircuitBreakerLlm {
  const { config, log, clock, store, metrics } = core;
  // Metered inside the limit: latency measures the provider, not the queue for a slot. Provenance (llm_calls) too.
  // The breaker outside the limit: while the model is failing, refused calls do not queue for a slot.
  return createCircuitBreakerLlm({
    llm: createConcurrencyLimitedLlm({
      llm: createMeteredLlm({
        llm: createProvenanceLlm({
          llm: createLlm(config, log, fetch),
          store,
          clock,
          providerHost: providerHostOf(config.llm.baseUrl ?? OPENAI_DEFAULT_BASE_URL),
          temperature: config.llm.temperature,
          prompts: prompts.files,
          log,
        }),
        metrics,
      }),
      maxConcurrency: config.llm.maxConcurrency,
    }),
    threshold: config.llm.circuitBreakerThreshold,
    cooldownMs: config.llm.circuitBreakerCooldownMs,
    now: () => clock.now(),
  });
}

/**
 * The safety classifier's model: the coach's model unless SAFETY_MODEL names another, at the same endpoint; either
 * way its calls are recorded in llm_calls like any other. Undefined when the model check is off or there is no model.
 */
export function safetyModel(core: Core, prompts: Prompts, coach: LlmClient): LlmClient | undefined {
  const { config, log, clock, store } = core;
  if (!config.safety.modelCheck || !llmConfigured(config)) return undefined;
  if (!config.safety.model) return coach;
  return createProvenanceLlm({
    llm: createOpenAiCompatibleLlm({
      apiKey: config.llm.apiKey,
      baseUrl: config.llm.baseUrl,
      model: config.safety.model,
      temperature: 0,
      maxTokens: config.llm.maxTokens,
      timeoutMs: config.llm.timeoutMs,
      maxRetries: config.llm.maxRetries,
      log,
    }),
    store,
    clock,
    providerHost: providerHostOf(config.llm.baseUrl ?? OPENAI_DEFAULT_BASE_URL),
    temperature: 0,
    prompts: prompts.files,
    log,
  });
}

function createLlm(config: Config, log: Log, fetch: typeof globalThis.fetch): LlmClient {
  const { llm } = config;
  if (!llmConfigured(config)) {
    log.warn({}, `${LLM_NOT_CONFIGURED_MESSAGE}. The server runs, but every turn answers "assistant unavailable".`);
    return createUnavailableLlm();
  }
  log.info(
    { model: llm.model, baseUrl: llm.baseUrl ?? OPENAI_DEFAULT_BASE_URL, maxConcurrency: llm.maxConcurrency },
    `LLM: ${llm.model} at ${llm.baseUrl ?? OPENAI_DEFAULT_BASE_URL}`,
  );
  return createOpenAiCompatibleLlm({
    apiKey: llm.apiKey,
    baseUrl: llm.baseUrl,
    model: llm.model,
    temperature: llm.temperature,
    maxTokens: llm.maxTokens,
    extraBody: llm.extraBody,
    timeoutMs: llm.timeoutMs,
    maxRetries: llm.maxRetries,
    log,
    fetch,
  });
}
