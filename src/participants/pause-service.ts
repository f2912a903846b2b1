/**
 * Vacation mode: a participant paused with an optional resume date. Pausing is the participant's `paused` status
 * (every proactive job cancelled, as any pause); the resume date is a durable `participant_resume` job at local
 * midnight of that date in the participant's time zone. Resuming (on the date, or by hand) is the `active` status,
 * which arms the daily prompt at its next due time: the prompts of the paused days are not sent in a burst.
 */

import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import type { NewId } from '../domain/ids.ts';
import { type Participant, ParticipantStatus } from '../domain/participant.ts';
import { compareLocalDates, instantAtLocalTime, localDateOf } from '../scheduling/schedule-time.ts';
import type { Job, Store } from '../store/store.ts';
import type { ParticipantService } from './participant-service.ts';

export const PARTICIPANT_RESUME_JOB = 'participant_resume';
const resumeKey = (participantId: string) => `${PARTICIPANT_RESUME_JOB}:${participantId}`;

export interface PauseService {
  /** `resumeOn`: a `YYYY-MM-DD` date after today in the participant's time zone; without it, until resumed by hand. */
  pause(participantId: string, resumeOn: string | undefined, by: string): Promise<Participant>;
  resume(participantId: string, by: string): Promise<Participant>;
  /** The `participant_resume` job. */
  resumeOnDate(job: Job): Promise<void>;
}

export function createPauseService(options: {
  store: Store;
  clock: Clock;
  newId: NewId;
  participants: Pick<ParticipantService, 'get' | 'update'>;
  onEnqueued?: () => void;
}): PauseService {
  const { store, clock, newId, participants } = options;

  return {
    async pause(participantId, resumeOn, by) {
      const participant = await participants.get(participantId);
      if (participant.status === ParticipantStatus.WITHDRAWN || participant.status === ParticipantStatus.COMPLETED) {
        throw new AppError('conflict', `participant ${participantId} is ${participant.status}: nothing to pause`);
      }
      let resumeAt: Date | undefined;
      if (resumeOn !== undefined) {
        const today = localDateOf(clock.now(), participant.timezone);
        if (compareLocalDates(resumeOn, today) <= 0) {
          throw new AppError('invalid_input', `resume_on must be after today (${today} in ${participant.timezone})`);
        }
        resumeAt = instantAtLocalTime(resumeOn, { hour: 0, minute: 0 }, participant.timezone);
      }
      const paused =
        participant.status === ParticipantStatus.PAUSED
          ? participant
          : await participants.update(participantId, { status: ParticipantStatus.PAUSED });
      await store.transaction(async (tx) => {
        const now = clock.now();
        await tx.jobs.cancelByKey(resumeKey(participantId), now);
        if (resumeAt) {
          await tx.jobs.enqueue(
            {
              id: newId('job'),
              kind: PARTICIPANT_RESUME_JOB,
              participantId,
              runAt: resumeAt,
              payload: { resume_on: resumeOn },
              dedupKey: resumeKey(participantId),
            },
            now,
          );
          tx.afterCommit(() => options.onEnqueued?.());
        }
        await tx.events.record({
          participantId,
          type: 'participant-paused',
          data: { by, resume_on: resumeOn ?? null },
          createdAt: now,
        });
      });
      return paused;
    },

    async resume(participantId, by) {
      const participant = await participants.get(participantId);
      if (participant.status !== ParticipantStatus.PAUSED) {
        throw new AppError('conflict', `participant ${participantId} is ${participant.status}, not paused`);
      }
      const resumed = await participants.update(participantId, { status: ParticipantStatus.ACTIVE });
      await store.transaction(async (tx) => {
        const now = clock.now();
        await tx.jobs.cancelByKey(resumeKey(participantId), now);
        await tx.events.record({ participantId, type: 'participant-resumed', data: { by }, createdAt: now });
      });
      return resumed;
    },

    async resumeOnDate(job) {
      const participantId = job.participantId;
      if (!participantId) return;
      const participant = await store.participants.get(participantId);
      // Resumed by hand, withdrawn or deleted meanwhile: nothing to do.
      if (participant?.status !== ParticipantStatus.PAUSED) return;
      await participants.update(participantId, { status: ParticipantStatus.ACTIVE });
      await store.events.record({
        participantId,
        type: 'participant-resumed',
        data: { by: 'resume date', resume_on: job.payload['resume_on'] ?? null },
        createdAt: clock.now(),
      });
    },
  };
}
