/**
 * `flag_for_staff`: the coach raises a staff alert the detectors missed (a worrying turn of the conversation, a
 * request for a person, a safety concern in context). It goes the way a detector's alert goes: recorded with the call,
 * delivered on every configured route, and, as configured, the participant under staff review. The coach keeps the
 * conversation going; the fixed safety message is the detectors' answer, not the coach's.
 */
import { z } from 'zod';
import { defineTool } from '../engine/tool.ts';

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

/** What the coach reports about a participant. */
export interface StaffFlag {
  participantId: string;
  urgency: 'normal' | 'urgent';
  reason: string;
}

/**
 * Where a flag goes: the safety service raises it as a staff alert (safety/staff-flag-sink.ts), wired in the
 * composition root. Answers the alert's id.
 */
export interface StaffFlagSink {
  flag(flag: StaffFlag): Promise<string>;
}

export function createFlagForStaffTool(options: { sink: StaffFlagSink }) {
  return defineTool({
    name: FLAG_FOR_STAFF_TOOL,
    description:
      'Alert the study team (people) about this participant: use it when they may be at risk, ask for a person, or ' +
      'something needs human judgement. The team is notified at once; keep supporting the participant meanwhile.',
    schema: flagForStaffSchema,
    databaseOnly: true,
    async execute(args, context) {
      const alertId = await options.sink.flag({
        participantId: context.participantId,
        urgency: args.urgency,
        reason: args.reason,
      });
      return { status: 'success', message: 'The study team has been alerted.', alert_id: alertId };
    },
  });
}
