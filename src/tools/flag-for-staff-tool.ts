/**
 * `flag_for_staff`: the coach raises a staff alert the detectors missed (a worrying turn of the conversation, a
 * request for a person, a safety concern in context). It goes the way a detector's alert goes: recorded with the call,
 * delivered on every configured route, and, as configured, the participant under staff review. The coach keeps the
 * conversation going; the fixed safety message is the detectors' answer, not the coach's.
 */
import { z } from 'zod';
import { defineTool } from '../engine/tool.ts';
import type { AlertService } from '../safety/alert-service.ts';
import type { Store } from '../store/store.ts';

export const FLAG_FOR_STAFF_TOOL = 'flag_for_staff';

export const flagForStaffSchema = z.object({
  reason: z
    .string()
    .trim()
    .min(1)
    .max(1000)
    .describe('What the study team should know, in one or two sentences (no need to quote the participant).'),
  urgency: z
    .enum(['normal', 'urgent'])
    .default('normal')
    .describe('"urgent" when the participant may be at risk now; "normal" for anything a person should see soon.'),
});

export function createFlagForStaffTool(options: { store: Store; alerts: AlertService; review: boolean }) {
  return defineTool({
    name: FLAG_FOR_STAFF_TOOL,
    description:
      'Alert the study team (people) about this participant: use it when they may be at risk, ask for a person, or ' +
      'something needs human judgement. The team is notified at once; keep supporting the participant meanwhile.',
    schema: flagForStaffSchema,
    databaseOnly: true,
    async execute(args, context) {
      const alertId = await options.store.transaction(() =>
        options.alerts.raise({
          participantId: context.participantId,
          kind: 'staff-flag',
          detector: 'coach',
          rule: args.urgency,
          score: undefined,
          urgency: args.urgency,
          reason: args.reason,
          // The message is linked through the tool call's transcript entry and the event: one message may raise a
          // detector's alert too, and the alert's own link is unique per message.
          sourceMessageId: undefined,
          review: options.review,
        }),
      );
      return { status: 'success', message: 'The study team has been alerted.', alert_id: alertId };
    },
  });
}
