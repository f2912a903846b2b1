/**
 * Study-wide quiet hours (`QUIET_HOURS=21:00-08:00`) in each participant's local time. A proactive job that comes due
 * inside the window waits (the same job row, `JobHold`) until the window ends, then runs: the daily prompt and
 * broadcasts are sent then; reminders and follow-ups, which belong to their moment, are dropped instead (recorded as
 * a `proactive-skipped` event). Replies are never held: only the job kinds below are wrapped, and a reply to a
 * participant is no such job.
 *
 * A daily prompt held to the end of the window runs with its due time moved to that end, so the daily prompt
 * handler's missed-prompt grace (meant for downtime) does not skip it for having waited.
 */

import { Temporal } from 'temporal-polyfill';
import type { Clock } from '../domain/clock.ts';
import type { LocalTime } from '../domain/local-time.ts';
import type { Job, Store } from '../store/store.ts';
import type { JobRunner } from './job-runner.ts';
import { minutesOfDay, nextOccurrence } from './schedule-time.ts';

export interface QuietHours {
  start: LocalTime;
  end: LocalTime;
}

/** What happens to a job of each kind that comes due inside the window. */
export type QuietHoursPolicy = Readonly<Record<string, 'defer' | 'drop'>>;

export const DEFAULT_QUIET_HOURS_POLICY: QuietHoursPolicy = {
  daily_prompt: 'defer',
  broadcast_message: 'defer',
  daily_prompt_reminder: 'drop',
  auto_feedback: 'drop',
  feedback_followup: 'drop',
};

function localMinutes(instant: Date, timeZone: string): number {
  const local = Temporal.Instant.fromEpochMilliseconds(instant.getTime()).toZonedDateTimeISO(timeZone);
  return local.hour * 60 + local.minute;
}

export function isQuiet(window: QuietHours, instant: Date, timeZone: string): boolean {
  const now = localMinutes(instant, timeZone);
  const start = minutesOfDay(window.start);
  const end = minutesOfDay(window.end);
  return start <= end ? now >= start && now < end : now >= start || now < end;
}

/** The runner with the proactive kinds' handlers wrapped; everything else passes through unchanged. */
export function withQuietHours(
  runner: JobRunner,
  options: {
    window: QuietHours;
    store: Pick<Store, 'participants' | 'events'>;
    clock: Clock;
    policy?: QuietHoursPolicy;
  },
): JobRunner {
  const policy = options.policy ?? DEFAULT_QUIET_HOURS_POLICY;
  const { window, store, clock } = options;
  return {
    ...runner,
    register(kind, handler, registerOptions) {
      const action = policy[kind];
      if (!action) {
        runner.register(kind, handler, registerOptions);
        return;
      }
      runner.register(
        kind,
        async (job: Job) => {
          const participant = job.participantId ? await store.participants.get(job.participantId) : undefined;
          if (!participant) return handler(job);
          const now = clock.now();
          if (isQuiet(window, now, participant.timezone)) {
            const until = nextOccurrence(now, window.end, participant.timezone);
            if (action === 'defer') return { hold: { until } };
            await store.events.record({
              participantId: participant.id,
              type: 'proactive-skipped',
              data: { reason: 'quiet-hours', job_kind: kind, job_id: job.id },
              createdAt: now,
            });
            return;
          }
          const fireAt = typeof job.payload['fire_at'] === 'string' ? new Date(job.payload['fire_at']) : undefined;
          if (fireAt && isQuiet(window, fireAt, participant.timezone)) {
            const windowEnd = nextOccurrence(fireAt, window.end, participant.timezone);
            return handler({ ...job, payload: { ...job.payload, fire_at: windowEnd.toISOString() } });
          }
          return handler(job);
        },
        registerOptions,
      );
    },
  };
}
