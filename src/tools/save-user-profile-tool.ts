/**
 * `save_user_profile` (specification §Tools): field-by-field merge (a field changes only when the new value is
 * non-empty and different), the legacy `last_blocker` alias of `last_barrier`, and tone proposals validated then
 * applied (specification §Tone).
 */
import { z } from 'zod';
import type { Clock } from '../domain/clock.ts';
import { readProfile, writeProfile } from '../domain/participant-data.ts';
import { PROFILE_TEXT_FIELDS, type ProfileTextField } from '../domain/profile.ts';
import { updateProfileTone } from '../domain/tone.ts';
import { defineTool, type ToolResult } from '../engine/tool.ts';
import type { Store } from '../store/store.ts';

const field = (description: string) => z.string().max(2000).optional().describe(description);

export const saveUserProfileSchema = z.object({
  habit_domain: field('The area of the habit, e.g. "movement", "sleep", "healthy eating".'),
  motivational_frame: field('Why the habit matters to the participant, in their words.'),
  preferred_time: field('When the participant wants the daily prompt, e.g. "08:30" or "after lunch".'),
  prompt_anchor: field('The existing daily routine the habit follows, e.g. "after I pour my morning coffee".'),
  additional_info: field('Anything else useful for personalising prompts.'),
  last_successful_prompt: field('The prompt that last worked for the participant.'),
  last_barrier: field('What got in the way last time.'),
  last_blocker: field('Deprecated alias of last_barrier.'),
  last_tweak: field('The adjustment agreed with the participant.'),
  last_motivator: field('What kept the participant going.'),
  tone_tags: z
    .array(z.string().max(64))
    .max(15)
    .optional()
    .describe(
      'Tone preferences, from: concise, detailed, formal, casual, no_emojis, emojis_ok, bullet_points, one_question_at_a_time, warm_supportive, neutral_professional, direct_coach, gentle_coach, confirm_before_acting, default_actionable, high_autonomy.',
    ),
  tone_update_source: z
    .enum(['explicit', 'implicit'])
    .optional()
    .describe('"explicit" when the participant asked for this tone; "implicit" when you inferred it (default).'),
  tone_confidence: z.number().min(0).max(1).optional().describe('Your confidence in an inferred tone, 0 to 1.'),
});

export function createSaveUserProfileTool(dependencies: {
  store: Store;
  clock: Clock;
  /** False for a participant whose tone is not adapted (a trial arm's setting): tone proposals are ignored. */
  toneAdaptation?: (participantId: string) => Promise<boolean>;
}) {
  const { store, clock } = dependencies;
  return defineTool({
    name: 'save_user_profile',
    description:
      "Save what the participant told you about their habit and preferences. Send only the fields you learned; empty fields are left unchanged. Returns the updated fields and the profile, or 'noop' when nothing changed.",
    schema: saveUserProfileSchema,
    databaseOnly: true,
    async execute(args, context): Promise<ToolResult> {
      const now = clock.now();
      const incoming: Partial<Record<ProfileTextField, string>> = {};
      for (const name of PROFILE_TEXT_FIELDS) {
        const value = args[name]?.trim();
        if (value) incoming[name] = value;
      }
      const legacyBarrier = args.last_blocker?.trim();
      if (legacyBarrier && !incoming.last_barrier) incoming.last_barrier = legacyBarrier;

      return store.transaction(async (tx) => {
        const profile = await readProfile(tx, context.participantId, now);
        const updatedFields: string[] = [];
        for (const [name, value] of Object.entries(incoming) as [ProfileTextField, string][]) {
          if (profile[name] !== value) {
            profile[name] = value;
            updatedFields.push(name);
          }
        }
        let toneNote: string | undefined;
        const toneAdapted = (await dependencies.toneAdaptation?.(context.participantId)) ?? true;
        if (args.tone_tags && args.tone_tags.length > 0 && !toneAdapted) {
          toneNote = 'tone not updated (tone adaptation is off for this participant)';
        } else if (args.tone_tags && args.tone_tags.length > 0) {
          const update = updateProfileTone(
            profile.tone,
            {
              tags: args.tone_tags,
              source: args.tone_update_source ?? 'implicit',
              ...(args.tone_confidence === undefined ? {} : { confidence: args.tone_confidence }),
            },
            now,
          );
          if (update.applied) {
            profile.tone = update.tone;
            updatedFields.push('tone');
          } else {
            toneNote = `tone not updated (${update.reason ?? 'unchanged'})`;
          }
        }
        if (updatedFields.length === 0) {
          return {
            status: 'noop',
            message: toneNote
              ? `Nothing changed: ${toneNote}.`
              : 'Nothing changed: the profile already has these values.',
            profile,
          };
        }
        profile.updated_at = now.toISOString();
        await writeProfile(tx, context.participantId, profile, now);
        return {
          status: 'success',
          message: `Saved ${updatedFields.join(', ')}.${toneNote ? ` Note: ${toneNote}.` : ''}`,
          updated_fields: updatedFields,
          profile,
        };
      });
    },
  });
}
