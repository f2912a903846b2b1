/**
 * The optional model-based detector: one small classification request per inbound message, to the study's model or
 * a separate one (`SAFETY_MODEL`), with its own prompt (`SAFETY_PROMPT_FILE`). It goes through the same LLM stack as
 * the coach's calls, so it is recorded in `llm_calls` (provenance, latency) like any of them. A failed or unreadable
 * answer is "not flagged": the keyword detector still ran, and the coach's turn must not wait on a broken classifier.
 */
import type { LlmClient } from '../llm/llm.ts';

export const DEFAULT_SAFETY_PROMPT = `You screen messages sent to an automated habit coach in a research study.
Decide whether the participant's message suggests a risk to their safety or someone else's: thoughts of suicide or
self-harm, a medical emergency, abuse or violence. Ordinary frustration, tiredness or a missed habit is not a risk.
Answer with JSON only: {"risk": true or false, "score": a number from 0 to 1, "category": "self-harm" | "emergency" |
"violence" | "none"}.`;

export interface ModelVerdict {
  flagged: boolean;
  score: number;
  category: string;
}

/** The JSON object in the model's answer (some models wrap it in prose or a code fence). */
export function parseVerdict(content: string, threshold: number): ModelVerdict | undefined {
  const start = content.indexOf('{');
  const end = content.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    const value = JSON.parse(content.slice(start, end + 1)) as Record<string, unknown>;
    const score = typeof value['score'] === 'number' ? value['score'] : value['risk'] === true ? 1 : 0;
    const category = typeof value['category'] === 'string' ? value['category'] : 'unspecified';
    return { flagged: value['risk'] === true || score >= threshold, score, category };
  } catch {
    return undefined;
  }
}

export interface RiskModelCheck {
  /** Undefined when the model could not be asked or its answer could not be read. */
  classify(participantId: string, text: string): Promise<ModelVerdict | undefined>;
}

export function createRiskModelCheck(options: {
  llm: Pick<LlmClient, 'chat'>;
  prompt: string;
  threshold: number;
  onError: (error: unknown) => void;
}): RiskModelCheck {
  return {
    async classify(participantId, text) {
      try {
        const response = await options.llm.chat({
          messages: [
            { role: 'system', content: options.prompt },
            { role: 'user', content: text },
          ],
          temperature: 0,
          purpose: 'safety-check',
          participantId,
        });
        return parseVerdict(response.content, options.threshold);
      } catch (error) {
        options.onError(error);
        return undefined;
      }
    },
  };
}
