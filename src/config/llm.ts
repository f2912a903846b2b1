/** The model's settings (`OPENAI_*`, `GENAI_*`, `LLM_*`) and the system prompt files. */
import type { ConfigReader } from './reader.ts';

/** `LLM_TOOL_PROTOCOL`: native tool calling, or the `<tool_call>` text protocol (llm/text-tool-protocol.ts). */
export const TOOL_PROTOCOL_SETTINGS = ['native', 'text'] as const;
export type ToolProtocolSetting = (typeof TOOL_PROTOCOL_SETTINGS)[number];

export interface LlmSettings {
  apiKey: string | undefined;
  baseUrl: string | undefined;
  model: string;
  /** `GENAI_TEMPERATURE`: unset → 0.1; set but empty → undefined (omitted, for reasoning models). */
  temperature: number | undefined;
  timeoutMs: number;
  maxRetries: number;
  maxConcurrency: number;
  /** `LLM_TOOL_PROTOCOL`: `native` tool calling or the `<tool_call>` text protocol. */
  toolProtocol: ToolProtocolSetting;
  /** `LLM_MAX_TOKENS`: sent as `max_tokens` when set. */
  maxTokens: number | undefined;
  /** `LLM_EXTRA_BODY`: a JSON object merged into every request body. */
  extraBody: Record<string, unknown> | undefined;
  /** `LLM_OUTAGE_RETRY_FOR`: how long a turn whose model call failed is retried before its message fails. */
  outageRetryForMs: number;
  /**
   * `LLM_OUTAGE_NOTICE`: the one message per outage, the same in every language; '' = no notice; unset = the
   * catalogue's `reply.outageNotice` in the participant's language.
   */
  outageNotice: string | undefined;
  /** `LLM_CIRCUIT_BREAKER_THRESHOLD`: consecutive failed calls that open the breaker. */
  circuitBreakerThreshold: number;
  /** `LLM_CIRCUIT_BREAKER_COOLDOWN`: how long an open breaker refuses calls before letting one through. */
  circuitBreakerCooldownMs: number;
}

export interface PromptSettings {
  intakeFile: string | undefined;
  feedbackFile: string | undefined;
  promptGeneratorFile: string | undefined;
}

export function readLlmSettings(read: ConfigReader): LlmSettings {
  return {
    apiKey: read.string('OPENAI_API_KEY'),
    baseUrl: read.string('OPENAI_BASE_URL'),
    model: read.string('GENAI_MODEL') ?? 'gpt-4o-mini',
    temperature: read.isBlank('GENAI_TEMPERATURE')
      ? undefined
      : read.number('GENAI_TEMPERATURE', 0.1, (n) => n >= 0 && n <= 2, 'a number from 0 to 2'),
    timeoutMs: read.duration('LLM_TIMEOUT', '60s'),
    maxRetries: read.number('LLM_MAX_RETRIES', 3, (n) => Number.isInteger(n) && n >= 0, 'a non-negative integer'),
    maxConcurrency: read.number('LLM_MAX_CONCURRENCY', 8, (n) => Number.isInteger(n) && n > 0, 'a positive integer'),
    toolProtocol: read.oneOf('LLM_TOOL_PROTOCOL', TOOL_PROTOCOL_SETTINGS, 'native'),
    maxTokens: read.string('LLM_MAX_TOKENS')
      ? read.number('LLM_MAX_TOKENS', 0, (n) => Number.isInteger(n) && n > 0, 'a positive integer')
      : undefined,
    extraBody: read.jsonObject('LLM_EXTRA_BODY'),
    outageRetryForMs: read.duration('LLM_OUTAGE_RETRY_FOR', '1h'),
    outageNotice: read.optionalText('LLM_OUTAGE_NOTICE'),
    circuitBreakerThreshold: read.number(
      'LLM_CIRCUIT_BREAKER_THRESHOLD',
      5,
      (n) => Number.isInteger(n) && n > 0,
      'a positive integer',
    ),
    circuitBreakerCooldownMs: read.duration('LLM_CIRCUIT_BREAKER_COOLDOWN', '30s'),
  };
}

export function readPromptSettings(read: ConfigReader): PromptSettings {
  return {
    intakeFile: read.string('INTAKE_BOT_PROMPT_FILE'),
    feedbackFile: read.string('FEEDBACK_TRACKER_PROMPT_FILE'),
    promptGeneratorFile: read.string('PROMPT_GENERATOR_PROMPT_FILE'),
  };
}
