/**
 * What an arm changes, plugged into the existing ports so the engine and the scheduler stay unaware of trials:
 * - the habit-prompt generator: a `static` arm's prompt is a text from the design's list (no model call);
 * - the daily prompt's delivery guard: a `none` arm gets no daily prompt (the day is skipped and recorded);
 * - the timers: reminders, auto-feedback, the intensity poll and feedback follow-ups switched off per arm;
 * - the conversation: the arm's prompt directory and tone adaptation, through the engine's prompt settings.
 * The arm is read from the participant's allocation each time, through the store the settings are created with (inside
 * a caller's unit of work it joins it), so a staff override applies from then on.
 */

import type { Clock } from '../domain/clock.ts';
import { DataKey } from '../domain/data-keys.ts';
import { readProfile, writeData } from '../domain/participant-data.ts';
import type { HabitPromptGenerator } from '../engine/habit-prompt-generator.ts';
import type { PromptSettingsSource } from '../engine/system-prompts.ts';
import type { PromptDeliveryGuard } from '../scheduling/daily-prompt-hooks.ts';
import type { TimerFeatureSource } from '../scheduling/timers/timer-dependencies.ts';
import type { Store } from '../store/store.ts';
import { keyedUniform } from './keyed-random.ts';
import type { Arm } from './study-design.ts';
import type { ArmPrompts, StudyInForce } from './study-design-file.ts';

export interface ArmSettings {
  armOf(participantId: string): Promise<Arm | undefined>;
  timerFeatures: TimerFeatureSource;
  /** Wraps the model's generator: static arms answer from their list, others go to the model. */
  promptGenerator(inner: HabitPromptGenerator): HabitPromptGenerator;
  /** Wraps a delivery guard (or none): arms without a daily prompt are refused first (or get the Done poll alone). */
  deliveryGuard(inner: PromptDeliveryGuard | undefined): PromptDeliveryGuard;
  /** The arm's own system prompts (its `prompt_dir`) and whether its tone is adapted. */
  promptSettings: PromptSettingsSource;
  /** Whether the participant's tone tags are updated and used (`features.tone_adaptation`). */
  toneAdaptation(participantId: string): Promise<boolean>;
}

/** The list for a language: its own, else its base language's (`pt` for `pt-BR`), else English. */
export function staticTextsFor(texts: Readonly<Record<string, string[]>>, language: string | undefined): string[] {
  const tag = language ?? 'en';
  return texts[tag] ?? texts[tag.split('-')[0] ?? ''] ?? texts['en'] ?? [];
}

export function createArmSettings(options: { study: StudyInForce; store: Store; clock: Clock }): ArmSettings {
  const { study, store, clock } = options;
  const arms = new Map(study.design.arms.map((arm) => [arm.id, arm]));

  async function armOf(participantId: string) {
    const allocation = await store.allocations.get(participantId);
    return allocation ? arms.get(allocation.armId) : undefined;
  }

  /** The n-th prompt's text: in turn (`rotate`), or drawn from the seed, the participant and n (`random`). */
  async function staticPrompt(participantId: string, arm: Arm): Promise<{ prompt: string; index: number } | undefined> {
    if (arm.daily_prompt.mode !== 'static') return undefined;
    const participant = await store.participants.get(participantId);
    const texts = staticTextsFor(arm.daily_prompt.texts, participant?.language);
    const sent = (await readProfile(store, participantId, clock.now())).total_prompts;
    const index =
      arm.daily_prompt.order === 'rotate'
        ? sent % texts.length
        : Math.floor(
            keyedUniform(study.design.study.seed, {
              studyId: study.design.study.id,
              stratum: participantId,
              index: sent,
              purpose: 'static-prompt',
              counter: 0,
            }) * texts.length,
          );
    const prompt = texts[index];
    return prompt === undefined ? undefined : { prompt, index };
  }

  return {
    armOf,

    async timerFeatures(participantId) {
      const features = (await armOf(participantId))?.features;
      return {
        reminders: features?.reminders ?? true,
        autoFeedback: features?.auto_feedback ?? true,
        intensityPoll: features?.intensity_poll ?? true,
        feedbackFollowups: features?.feedback_followups ?? true,
      };
    },

    async promptSettings(participantId, purpose) {
      const arm = await armOf(participantId);
      if (!arm) return undefined;
      const systemPrompt = study.armPrompts?.get(arm.id)?.[purpose as keyof ArmPrompts];
      return { toneAdaptation: arm.features.tone_adaptation, ...(systemPrompt ? { systemPrompt } : {}) };
    },

    async toneAdaptation(participantId) {
      return (await armOf(participantId))?.features.tone_adaptation ?? true;
    },

    promptGenerator(inner) {
      return {
        async generate(participantId, request) {
          const arm = await armOf(participantId);
          const chosen = arm && (await staticPrompt(participantId, arm));
          if (!arm || !chosen) return inner.generate(participantId, request);
          // The same writes as the model's generator, so the feedback module sees the prompt the participant got.
          const record = async () => {
            const now = clock.now();
            await writeData(store, participantId, { [DataKey.lastHabitPrompt]: chosen.prompt }, now);
            await store.events.record({
              participantId,
              type: 'static-prompt-chosen',
              data: { arm: arm.id, index: chosen.index, delivery_mode: request.deliveryMode },
              createdAt: now,
            });
          };
          if (request.deferRecord) return { ok: true, prompt: chosen.prompt, warnings: [], record };
          await store.transaction(record);
          return { ok: true, prompt: chosen.prompt, warnings: [] };
        },
      };
    },

    deliveryGuard(inner) {
      return async (request) => {
        const arm = await armOf(request.participant.id);
        if (arm?.daily_prompt.mode === 'none') {
          // The assessment-only arm's day still counts when it gets the Done poll: the poll is its measurement.
          if (!arm.daily_prompt.done_poll) return { deliver: false, reason: 'arm-without-daily-prompt' };
          const outer = inner ? await inner(request) : { deliver: true as const };
          return outer.deliver === true ? { deliver: 'done-poll-only', reason: 'arm-without-daily-prompt' } : outer;
        }
        return inner ? inner(request) : { deliver: true };
      };
    },
  };
}

/**
 * The arms' prompt files as provenance sources, named `arms/<arm>/<file>` (`arms/coach/es/intake.txt`), so the
 * start-up record lists their versions and each model call names the file its system message used.
 */
export function armPromptSources(study: StudyInForce | undefined): { file: string; text: string }[] {
  const sources: { file: string; text: string }[] = [];
  for (const [armId, prompts] of study?.armPrompts ?? []) {
    for (const [purpose, prompt] of Object.entries(prompts)) {
      sources.push({ file: `arms/${armId}/${purpose}.txt`, text: prompt.text });
      for (const [language, version] of prompt.languagePrompts) {
        sources.push({ file: `arms/${armId}/${language}/${purpose}.txt`, text: version.text });
      }
    }
  }
  return sources;
}
