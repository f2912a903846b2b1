/**
 * Generates habit prompts (specification §Tools): `prompt_anchor` and `preferred_time` are mandatory, domain and
 * motivation only warn. The generation request goes through the same context builder as every conversation turn.
 */

import type { Clock } from '../domain/clock.ts';
import { DataKey } from '../domain/data-keys.ts';
import { errorMessage } from '../domain/errors.ts';
import { ENGLISH } from '../domain/language.ts';
import type { Log } from '../domain/log.ts';
import { readData, readProfile, writeData } from '../domain/participant-data.ts';
import type { UserProfile } from '../domain/profile.ts';
import { buildToneGuide } from '../domain/tone.ts';
import type { ChatResponse, LlmClient } from '../llm/llm.ts';
import type { Store } from '../store/store.ts';
import { buildChatMessages } from './context-builder.ts';
import type { HabitPromptGenerator, HabitPromptOutcome } from './habit-prompt-generator.ts';
import { createRequestGuard, type RequestGuard } from './request-validator.ts';
import { type LanguagePrompts, type PromptSettingsSource, participantSystemPrompt } from './system-prompts.ts';

const MANDATORY_FIELDS = ['prompt_anchor', 'preferred_time'] as const;
const RECOMMENDED_FIELDS = ['habit_domain', 'motivational_frame'] as const;

function describeProfile(profile: UserProfile, background: string, personalizationNotes: string | undefined): string {
  const lines = [
    'PARTICIPANT PROFILE:',
    `- Habit domain: ${profile.habit_domain || '(unknown)'}`,
    `- Motivation: ${profile.motivational_frame || '(unknown)'}`,
    `- Preferred time: ${profile.preferred_time}`,
    `- Anchor routine: ${profile.prompt_anchor}`,
    `- Intensity: ${profile.intensity}`,
    `- Successes so far: ${profile.success_count} of ${profile.total_prompts} prompts`,
  ];
  if (profile.additional_info) lines.push(`- Additional info: ${profile.additional_info}`);
  if (profile.last_successful_prompt) lines.push(`- Last prompt that worked: ${profile.last_successful_prompt}`);
  if (profile.last_barrier) lines.push(`- Last barrier: ${profile.last_barrier}`);
  if (profile.last_tweak) lines.push(`- Last agreed tweak: ${profile.last_tweak}`);
  if (profile.last_motivator) lines.push(`- Last motivator: ${profile.last_motivator}`);
  if (personalizationNotes) lines.push(`- Notes for this prompt: ${personalizationNotes}`);
  if (background) lines.push('', 'PARTICIPANT BACKGROUND:', background);
  return lines.join('\n');
}

export function createHabitPromptGenerator(dependencies: {
  store: Store;
  llm: LlmClient;
  clock: Clock;
  systemPrompt: string;
  log: Log;
  /** Checks every request before it is sent: `throw` mode in tests, `repair` (the default) in production. */
  requestGuard?: RequestGuard;
  /** Per-language versions of the generator prompt (`prompts/es/prompt-generator.txt`). */
  languagePrompts?: LanguagePrompts;
  /** `DEFAULT_LANGUAGE`, for a participant without a recorded language (default `en`). */
  defaultLanguage?: string;
  /** A participant's own generator prompt and tone adaptation (a trial arm's). */
  promptSettings?: PromptSettingsSource;
}): HabitPromptGenerator {
  const { store, llm, clock, systemPrompt, log } = dependencies;
  const guard = dependencies.requestGuard ?? createRequestGuard({ mode: 'repair', log });
  return {
    async generate(participantId, options): Promise<HabitPromptOutcome> {
      const now = clock.now();
      const data = await readData(store, participantId);
      const profile = await readProfile(store, participantId, now);
      // The prompt is written in the participant's language: the generator gets the same instruction as the coach.
      const language =
        (await store.participants.get(participantId))?.language ?? dependencies.defaultLanguage ?? ENGLISH;
      const missing = MANDATORY_FIELDS.filter((field) => !profile[field].trim());
      if (missing.length > 0) {
        return {
          ok: false,
          missing: [...missing],
          error: `Cannot generate a habit prompt: the profile is missing ${missing.join(' and ')}. Ask the participant for ${missing.length > 1 ? 'them' : 'it'} and save with save_user_profile first.`,
        };
      }
      const warnings = RECOMMENDED_FIELDS.filter((field) => !profile[field].trim()).map(
        (field) => `${field} is not set; the prompt is less personal.`,
      );
      const settings = await dependencies.promptSettings?.(participantId, 'prompt-generator');
      const messages = guard(
        buildChatMessages({
          systemPrompt: participantSystemPrompt(
            settings,
            { text: systemPrompt, languagePrompts: dependencies.languagePrompts },
            language,
          ),
          language,
          contextBlocks: [
            describeProfile(profile, data[DataKey.participantBackground] ?? '', options.personalizationNotes),
          ],
          toneGuide: settings?.toneAdaptation === false ? '' : buildToneGuide(profile.tone),
          history: [],
          userMessage: {
            content: `Write the ${options.deliveryMode === 'scheduled' ? "participant's daily" : 'first'} habit prompt now.`,
            synthetic: true,
          },
          loopMessages: [],
          historyLimit: 0,
        }),
        { purpose: 'prompt-generator' },
      );
      let response: ChatResponse;
      try {
        // The call's provenance row is written below, in the transaction that keeps the prompt: one commit less.
        response = await llm.chat({ messages, purpose: 'prompt-generator', participantId, deferProvenance: true });
      } catch (error) {
        log.warn({ participantId, error: errorMessage(error) }, 'habit prompt generation failed');
        return { ok: false, missing: [], error: `The prompt generator is unavailable: ${errorMessage(error)}` };
      }
      const prompt = response.content.trim();
      if (!prompt) {
        const { recordProvenance } = response;
        if (recordProvenance) await store.transaction(() => recordProvenance());
        return { ok: false, missing: [], error: 'The prompt generator returned an empty prompt.' };
      }
      const record = async () => {
        await response.recordProvenance?.();
        await writeData(store, participantId, { [DataKey.lastHabitPrompt]: prompt }, now);
        await store.events.record({
          participantId,
          type: 'habit-prompt-generated',
          data: { delivery_mode: options.deliveryMode, prompt, model: llm.model, warnings },
          createdAt: now,
          ...(options.sourceMessageId ? { sourceMessageId: options.sourceMessageId } : {}),
        });
      };
      if (options.deferRecord) return { ok: true, prompt, warnings, record };
      await store.transaction(record);
      return { ok: true, prompt, warnings };
    },
  };
}
