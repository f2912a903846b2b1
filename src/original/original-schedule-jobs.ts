/**
 * `POST /schedule` as durable jobs: a schedule is one pending `original_schedule` job at a time, due at its next
 * matching minute; when it runs it sends the prompt and enqueues the next occurrence in the same transaction, so the
 * recurrence survives restarts like a daily prompt. The schedule's id (`sched_…`, the original's timer id) is in
 * every occurrence's payload: it is what `GET/DELETE /timers/{id}` take.
 *
 * Missed occurrences are not caught up: after a stop, the overdue occurrence runs once and the next one is the first
 * match after now. An occurrence that still fails after its retries is skipped (recorded), the schedule goes on.
 */

import type { Clock } from '../domain/clock.ts';
import { errorMessage } from '../domain/errors.ts';
import type { NewId } from '../domain/ids.ts';
import type { Log } from '../domain/log.ts';
import type { OriginalSchedule } from '../domain/original-schedule.ts';
import { ParticipantStatus } from '../domain/participant.ts';
import type { JobHandler } from '../scheduling/job-runner.ts';
import type { Job, Store, StoreRepositories } from '../store/store.ts';
import type { PromptContent } from './original-prompt.ts';
import { nextRunAfter } from './original-schedule.ts';
import type { MadeMessage, OriginalSender } from './original-sender.ts';

export const ORIGINAL_SCHEDULE_JOB = 'original_schedule';
/** The transcript module of scheduled sends. */
export const SCHEDULE_MODULE = 'schedule';
const ORIGINAL_SCHEDULE_MAX_ATTEMPTS = 3;

export interface OriginalSchedulePayload extends Record<string, unknown> {
  schedule_id: string;
  schedule: OriginalSchedule;
  prompt: PromptContent;
  /** RFC 3339: when `POST /schedule` made it. */
  created_at: string;
}

export function parseSchedulePayload(payload: Record<string, unknown>): OriginalSchedulePayload | undefined {
  const { schedule_id: scheduleId, schedule, prompt, created_at: createdAt } = payload;
  if (typeof scheduleId !== 'string' || typeof schedule !== 'object' || schedule === null) return undefined;
  if (typeof prompt !== 'object' || prompt === null || typeof createdAt !== 'string') return undefined;
  return payload as OriginalSchedulePayload;
}

/** The pending (or running) occurrence of a schedule, if any. */
export async function findScheduleJob(repositories: StoreRepositories, scheduleId: string): Promise<Job | undefined> {
  const jobs = await repositories.jobs.listPending({ kind: ORIGINAL_SCHEDULE_JOB });
  return jobs.find((job) => job.payload['schedule_id'] === scheduleId);
}

/** What creates a schedule or its next occurrence: the store they write through (joining the caller's unit of work). */
export interface ScheduleWriter {
  store: Store;
  newId: NewId;
}

function enqueueOccurrence(
  writer: ScheduleWriter,
  payload: OriginalSchedulePayload,
  options: { participantId: string; after: Date; now: Date },
) {
  const runAt = nextRunAfter(payload.schedule, options.after);
  if (!runAt) return undefined;
  return writer.store.jobs.enqueue(
    {
      id: writer.newId('job'),
      kind: ORIGINAL_SCHEDULE_JOB,
      participantId: options.participantId,
      runAt,
      payload,
      maxAttempts: ORIGINAL_SCHEDULE_MAX_ATTEMPTS,
    },
    options.now,
  );
}

/**
 * Creates a schedule: its first occurrence's job and a `schedule-created` event, in one unit of work (the caller's
 * when one is open). Undefined when the schedule never matches (31 February); the caller checks that first.
 */
export function createSchedule(
  writer: ScheduleWriter,
  request: { participantId: string; schedule: OriginalSchedule; prompt: PromptContent; now: Date },
): Promise<{ scheduleId: string; job: Job } | undefined> {
  const { store, newId } = writer;
  return store.transaction(async () => {
    const payload: OriginalSchedulePayload = {
      schedule_id: newId('sched'),
      schedule: request.schedule,
      prompt: request.prompt,
      created_at: request.now.toISOString(),
    };
    const job = await enqueueOccurrence(writer, payload, { ...request, after: request.now });
    if (!job) return undefined;
    await store.events.record({
      participantId: request.participantId,
      type: 'schedule-created',
      data: { schedule_id: payload.schedule_id, prompt_type: request.prompt.type, next_run: job.runAt.toISOString() },
      createdAt: request.now,
    });
    return { scheduleId: payload.schedule_id, job };
  });
}

export interface ScheduleHandlerOptions {
  store: Store;
  sender: OriginalSender;
  clock: Clock;
  newId: NewId;
  log: Log;
  /** Called after the next occurrence is committed (`runner.notify`). */
  onJobEnqueued?: () => void;
}

/** The `original_schedule` handler; runs under the participant's lock. */
export function createScheduleHandler(options: ScheduleHandlerOptions): JobHandler {
  const { store, sender, clock, log } = options;
  return async (job) => {
    const payload = parseSchedulePayload(job.payload);
    const participantId = job.participantId;
    if (!payload || !participantId) {
      log.error({ jobId: job.id }, 'original_schedule job without a valid payload: dropped');
      return;
    }
    const participant = await store.participants.get(participantId);
    if (!participant) return; // Deleted: the schedule ends with them.
    // A re-run after a crash between the commit and the completion: the next occurrence is already there.
    const occurrences = await store.jobs.listPending({ participantId, kind: ORIGINAL_SCHEDULE_JOB });
    if (occurrences.some((other) => other.id !== job.id && other.payload['schedule_id'] === payload.schedule_id))
      return;
    let made: MadeMessage | undefined;
    let skipped: string | undefined;
    if (participant.status !== ParticipantStatus.ACTIVE) {
      skipped = `participant is ${participant.status}`;
    } else {
      try {
        made = await sender.make(payload.prompt, participantId);
      } catch (error) {
        // Retried with back-off; the last attempt skips this occurrence so the schedule goes on.
        if (job.attempts < job.maxAttempts) throw error;
        skipped = errorMessage(error);
      }
    }
    const now = clock.now();
    const next = await store.transaction(async () => {
      const sent = made ? await sender.sendLocked(participantId, made, SCHEDULE_MODULE) : undefined;
      const nextJob = await enqueueOccurrence(options, payload, { participantId, after: now, now });
      await store.events.record({
        participantId,
        type: sent ? 'scheduled-prompt-sent' : 'scheduled-prompt-skipped',
        data: {
          schedule_id: payload.schedule_id,
          job_id: job.id,
          ...(sent ? { outbound_id: sent.id } : { reason: skipped ?? 'unknown' }),
          next_run: nextJob?.runAt.toISOString() ?? null,
        },
        createdAt: now,
      });
      return nextJob;
    });
    if (next) options.onJobEnqueued?.();
  };
}
