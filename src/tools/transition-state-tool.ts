/**
 * `transition_state` (specification §Tools): an immediate transition writes the sub-state and cancels a pending
 * auto-feedback timer (through the one transition function); `delay_minutes > 0` schedules it through the
 * delayed-transition port.
 */
import { z } from 'zod';
import type { Clock } from '../domain/clock.ts';
import { ConversationState } from '../domain/conversation-state.ts';
import type { DelayedTransitionScheduler } from '../engine/delayed-transitions.ts';
import { transitionConversationState } from '../engine/state-transition.ts';
import { defineTool, errorResult, type ToolResult } from '../engine/tool.ts';
import type { Store } from '../store/store.ts';

/** A week: anything longer is almost certainly a unit mistake by the model. */
const MAX_DELAY_MINUTES = 7 * 24 * 60;

export const transitionStateSchema = z.object({
  target_state: z
    .enum([ConversationState.INTAKE, ConversationState.FEEDBACK])
    .describe('The conversation phase to move to.'),
  delay_minutes: z
    .number()
    .min(0)
    .max(MAX_DELAY_MINUTES)
    .optional()
    .describe('Minutes to wait before the transition; omit or 0 for now.'),
  reason: z.string().max(500).optional().describe('Why the transition is made (kept in the audit log).'),
});

export function createTransitionStateTool(dependencies: {
  store: Store;
  clock: Clock;
  delayedTransitions?: DelayedTransitionScheduler;
}) {
  const { store, clock, delayedTransitions } = dependencies;
  return defineTool({
    name: 'transition_state',
    description:
      'Move the conversation to another phase: INTAKE (collect or repair the profile) or FEEDBACK (collect how the habit went). Optionally after a delay in minutes.',
    schema: transitionStateSchema,
    databaseOnly: true,
    async execute(args, context): Promise<ToolResult> {
      const now = clock.now();
      const delay = args.delay_minutes ?? 0;
      if (delay > 0) {
        if (!delayedTransitions) {
          return errorResult('Delayed transitions are not available. Transition now (without delay_minutes) instead.');
        }
        const scheduled = await store.transaction(() =>
          delayedTransitions.schedule({
            participantId: context.participantId,
            target: args.target_state,
            delayMinutes: delay,
            now,
            ...(args.reason ? { reason: args.reason } : {}),
            ...(context.sourceMessageId ? { sourceMessageId: context.sourceMessageId } : {}),
          }),
        );
        return {
          status: 'success',
          message: `Transition to ${args.target_state} scheduled in ${delay} minutes.`,
          target_state: args.target_state,
          scheduled_for: scheduled.runAt.toISOString(),
        };
      }
      const outcome = await transitionConversationState(store, {
        participantId: context.participantId,
        target: args.target_state,
        source: 'tool',
        now,
        ...(args.reason ? { reason: args.reason } : {}),
        ...(context.sourceMessageId ? { sourceMessageId: context.sourceMessageId } : {}),
      });
      return {
        status: outcome.changed ? 'success' : 'noop',
        message: outcome.changed
          ? `Conversation moved from ${outcome.from} to ${outcome.to}.`
          : `The conversation is already in ${outcome.to}.`,
        previous_state: outcome.from,
        current_state: outcome.to,
      };
    },
  });
}
