/**
 * The habit-prompt generator's port, shared by the `generate_habit_prompt` tool (in conversation) and the
 * scheduler (daily delivery). Implemented by `createHabitPromptGenerator` in `habit-prompt-generator-service.ts`.
 */
export type DeliveryMode = 'immediate' | 'scheduled';

export type HabitPromptOutcome =
  | {
      ok: true;
      prompt: string;
      warnings: string[];
      /**
       * Only when `deferRecord` was asked: the generation's writes (the call's provenance, `lastHabitPrompt`, the
       * `habit-prompt-generated` event), through the generator's store: the caller runs them in the unit of work that
       * keeps the prompt.
       */
      record?: () => Promise<void>;
    }
  /** `missing` names the mandatory profile fields that are empty (prompt_anchor, preferred_time). */
  | { ok: false; error: string; missing: string[] };

export interface HabitPromptGenerator {
  /**
   * Validates the profile, generates a prompt with the LLM (profile, background, success count, last barrier and
   * tweak, tone guide) and stores it under `lastHabitPrompt`. Does not send anything. Never throws for expected
   * failures (missing fields, LLM error): they are returned as `ok: false`.
   */
  generate(
    participantId: string,
    options: {
      deliveryMode: DeliveryMode;
      personalizationNotes?: string;
      sourceMessageId?: string;
      /**
       * Write nothing after the model answered, and return the writes as `record` instead: the daily prompt commits
       * them with the prompt it sends, so a prompt that is never sent leaves no trace of having been kept.
       */
      deferRecord?: boolean;
    },
  ): Promise<HabitPromptOutcome>;
}
