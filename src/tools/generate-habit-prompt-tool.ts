/**
 * `generate_habit_prompt` (specification §Tools): generates a personalised habit prompt through the shared generator.
 * With delivery_mode `immediate` the prompt is shared in the conversation, which starts the feedback timers
 * (specification §Timers).
 */
import { z } from 'zod';
import type { Clock } from '../domain/clock.ts';
import type { HabitPromptGenerator } from '../engine/habit-prompt-generator.ts';
import { defineTool, errorResult, type ToolResult } from '../engine/tool.ts';
import type { TurnHooks } from '../engine/turn-hooks.ts';
import type { Store } from '../store/store.ts';

export const generateHabitPromptSchema = z.object({
  delivery_mode: z
    .enum(['immediate', 'scheduled'])
    .default('immediate')
    .describe('"immediate" to share the prompt now in the conversation; "scheduled" for a scheduled delivery.'),
  personalization_notes: z.string().max(2000).optional().describe('Extra notes to personalise this prompt.'),
});

export function createGenerateHabitPromptTool(dependencies: {
  store: Store;
  clock: Clock;
  generator: HabitPromptGenerator;
  hooks?: TurnHooks;
}) {
  const { store, clock, generator, hooks } = dependencies;
  return defineTool({
    name: 'generate_habit_prompt',
    description:
      'Generate a short personalised habit prompt from the saved profile. Needs prompt_anchor and preferred_time to be saved first. Share the returned prompt with the participant.',
    schema: generateHabitPromptSchema,
    async execute(args, context): Promise<ToolResult> {
      const outcome = await generator.generate(context.participantId, {
        deliveryMode: args.delivery_mode,
        ...(args.personalization_notes ? { personalizationNotes: args.personalization_notes } : {}),
        ...(context.sourceMessageId ? { sourceMessageId: context.sourceMessageId } : {}),
      });
      if (!outcome.ok) {
        return errorResult(outcome.error, outcome.missing.length > 0 ? { missing_fields: outcome.missing } : {});
      }
      if (args.delivery_mode === 'immediate' && hooks?.onImmediatePrompt) {
        const onImmediatePrompt = hooks.onImmediatePrompt;
        const at = clock.now();
        await store.transaction(() => onImmediatePrompt({ participantId: context.participantId, at }));
      }
      return {
        status: 'success',
        message:
          args.delivery_mode === 'immediate'
            ? 'Prompt generated. Share it with the participant in your reply.'
            : 'Prompt generated for scheduled delivery.',
        prompt: outcome.prompt,
        delivery_mode: args.delivery_mode,
        ...(outcome.warnings.length > 0 ? { warnings: outcome.warnings } : {}),
      };
    },
  });
}
