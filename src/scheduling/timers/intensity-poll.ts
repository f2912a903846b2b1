/**
 * The intensity poll (scenario 8): right after a scheduled prompt, at most once per participant-local calendar day,
 * "How's the intensity?" with options by the current intensity, as its own poll message. The answer comes back as a structured poll answer
 * and is applied by the conversation engine.
 */
import { DataKey } from '../../domain/data-keys.ts';
import type { NewId } from '../../domain/ids.ts';
import type { Participant } from '../../domain/participant.ts';
import { INTENSITY_POLL_QUESTION, intensityPollOptions } from '../../domain/polls.ts';
import { readData, readProfile, writeData } from '../../engine/participant-data.ts';
import type { Job, StoreRepositories } from '../../store/store.ts';
import { parseScheduleRegistry } from '../schedule-registry.ts';
import { canonicalTimeZone, localDateOf } from '../schedule-time.ts';
import type { DeferredSend } from './deferred-sends.ts';
import { runTimerJob } from './run-timer-job.ts';
import type { TimerDependencies } from './timer-dependencies.ts';

const FALLBACK_TIME_ZONE = 'UTC';

/** The zone whose calendar day counts: the participant's own, else their schedule's, else UTC. */
export function participantTimeZone(
  participant: Pick<Participant, 'timezone'>,
  scheduleRegistry: string | undefined,
): string {
  const own = canonicalTimeZone(participant.timezone);
  if (own) return own;
  const [schedule] = parseScheduleRegistry(scheduleRegistry);
  return (schedule && canonicalTimeZone(schedule.timezone)) ?? FALLBACK_TIME_ZONE;
}

export const INTENSITY_POLL_JOB = 'intensity_poll';
export const intensityPollJobKey = (participantId: string): string => `${INTENSITY_POLL_JOB}:${participantId}`;

export interface IntensityPollPayload extends Record<string, unknown> {
  /** RFC 3339: the prompt this poll follows; its local date is the day that counts. */
  prompt_sent_at: string;
}

/**
 * After a scheduled prompt: enqueues the check as a job due at once, in the prompt's transaction. Why a job and not
 * a send: the poll must go out after the prompt and its Done poll, and no send may happen inside a transaction
 * (see deferred-sends.ts). The job runs under the participant lock, so after the daily-prompt handler has
 * finished sending, and it is durable: a crash right after the prompt still polls.
 */
export function scheduleIntensityPollCheck(
  tx: StoreRepositories,
  request: { participantId: string; sentAt: Date; now: Date },
  dependencies: { newId: NewId },
): Promise<Job> {
  const payload: IntensityPollPayload = { prompt_sent_at: request.sentAt.toISOString() };
  return tx.jobs.enqueue(
    {
      id: dependencies.newId('job'),
      kind: INTENSITY_POLL_JOB,
      participantId: request.participantId,
      runAt: request.sentAt,
      payload,
      dedupKey: intensityPollJobKey(request.participantId),
    },
    request.now,
  );
}

/**
 * Decides the intensity poll in `tx`: when none was sent on the prompt's local date, records the date and returns
 * the poll to send after the commit (recording first means a retry never polls twice in one day). Returns
 * undefined when that day's poll was already sent.
 */
export async function decideIntensityPoll(
  tx: StoreRepositories,
  request: { participant: Participant; promptSentAt: Date; now: Date },
): Promise<DeferredSend | undefined> {
  const { participant, now } = request;
  const data = await readData(tx, participant.id);
  const day = localDateOf(request.promptSentAt, participantTimeZone(participant, data[DataKey.scheduleRegistry]));
  if (data[DataKey.lastIntensityPromptDate] === day) return undefined;
  const profile = await readProfile(tx, participant.id, now);
  await writeData(tx, participant.id, { [DataKey.lastIntensityPromptDate]: day }, now);
  return {
    participantId: participant.id,
    message: { type: 'poll', question: INTENSITY_POLL_QUESTION, options: intensityPollOptions(profile.intensity) },
    options: { kind: 'poll', module: 'scheduler' },
  };
}

/** The `intensity_poll` job handler. Not a nudge: it accompanies a prompt, so idleness does not stop it. */
export function createIntensityPollHandler(dependencies: TimerDependencies): (job: Job) => Promise<void> {
  return (job) =>
    runTimerJob(dependencies, job, undefined, async (tx, { participant, now }) => {
      const promptSentAt = Date.parse(String((job.payload as Partial<IntensityPollPayload>).prompt_sent_at));
      const poll = await decideIntensityPoll(tx, {
        participant,
        promptSentAt: Number.isNaN(promptSentAt) ? now : new Date(promptSentAt),
        now,
      });
      return poll ? [poll] : [];
    });
}
