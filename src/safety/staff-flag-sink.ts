/**
 * The safety side of the coach's `flag_for_staff` tool: its `StaffFlagSink` port (tools/flag-for-staff-tool.ts)
 * raises a `staff-flag` alert through the alert service, the way a detector's alert goes.
 */
import type { Store } from '../store/store.ts';
import type { StaffFlag, StaffFlagSink } from '../tools/flag-for-staff-tool.ts';
import type { AlertService } from './alert-service.ts';

export function createStaffFlagSink(options: { store: Store; alerts: AlertService; review: boolean }): StaffFlagSink {
  return {
    flag: (flag: StaffFlag) =>
      options.store.transaction(() =>
        options.alerts.raise({
          participantId: flag.participantId,
          kind: 'staff-flag',
          detector: 'coach',
          rule: flag.urgency,
          score: undefined,
          urgency: flag.urgency,
          reason: flag.reason,
          // The message is linked through the tool call's transcript entry and the event: one message may raise a
          // detector's alert too, and the alert's own link is unique per message.
          sourceMessageId: undefined,
          review: options.review,
        }),
      ),
  };
}
