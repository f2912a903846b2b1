/**
 * The original PromptPipe's timers (`GET /timers`, `GET/DELETE /timers/{id}`) over PromptPipe's durable jobs: every
 * pending or running job is a timer, with its kind, its participant (owner) and when it is due. A schedule made by
 * `POST /schedule` is one recurring timer whose id is the schedule's (`sched_…`) whichever occurrence is pending; the
 * daily prompt is recurring too; every other job runs once. Cancelling records a `timer-cancelled` event.
 */

import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import type { OriginalSchedule } from '../domain/original-schedule.ts';
import { writeData } from '../domain/participant-data.ts';
import { DAILY_PROMPT_JOB } from '../scheduling/daily-prompt-jobs.ts';
import { TIMER_ID_DATA_KEY, type TimerJobKind } from '../scheduling/timers/timer-jobs.ts';
import type { ParticipantLock } from '../store/participant-lock.ts';
import { type Job, JobStatus, type Store, type StoreRepositories } from '../store/store.ts';
import { formatGoDuration } from './go-duration.ts';
import { describeSchedule } from './original-schedule.ts';
import { findScheduleJob, ORIGINAL_SCHEDULE_JOB, parseSchedulePayload } from './original-schedule-jobs.ts';

/** The original's `TimerInfo`, plus what PromptPipe knows about the job behind it. */
export interface TimerInfo {
  id: string;
  type: 'once' | 'recurring';
  scheduled_at: string;
  expires_at?: string;
  schedule?: OriginalSchedule;
  next_run?: string;
  remaining: string;
  description: string;
  kind: string;
  participant_id: string | null;
  due_at: string;
  status: 'pending' | 'running';
  job_id: string;
}

const RECURRING_KINDS = new Set<string>([ORIGINAL_SCHEDULE_JOB, DAILY_PROMPT_JOB]);

function describe(job: Job): string {
  const payload = parseSchedulePayload(job.payload);
  if (job.kind === ORIGINAL_SCHEDULE_JOB && payload) {
    return `Recurring ${payload.prompt.type} prompt, ${describeSchedule(payload.schedule)}`;
  }
  if (job.kind === DAILY_PROMPT_JOB) return 'Daily habit prompt (the participant’s schedule)';
  return `${job.kind} job`;
}

export function timerInfo(job: Job, now: Date): TimerInfo {
  const payload = job.kind === ORIGINAL_SCHEDULE_JOB ? parseSchedulePayload(job.payload) : undefined;
  const recurring = RECURRING_KINDS.has(job.kind);
  const due = job.runAt.toISOString();
  return {
    id: payload?.schedule_id ?? job.id,
    type: recurring ? 'recurring' : 'once',
    scheduled_at: (payload ? new Date(payload.created_at) : job.createdAt).toISOString(),
    ...(recurring ? { next_run: due } : { expires_at: due }),
    ...(payload ? { schedule: payload.schedule } : {}),
    remaining: formatGoDuration(Math.max(0, job.runAt.getTime() - now.getTime())),
    description: describe(job),
    kind: job.kind,
    participant_id: job.participantId ?? null,
    due_at: due,
    status: job.status === JobStatus.RUNNING ? 'running' : 'pending',
    job_id: job.id,
  };
}

/** The job a timer id names: a schedule's current occurrence, or a pending or running job. */
async function findTimerJob(repositories: StoreRepositories, id: string): Promise<Job | undefined> {
  if (id.startsWith('sched_')) {
    const occurrence = await findScheduleJob(repositories, id);
    if (occurrence) return occurrence;
  }
  const job = await repositories.jobs.get(id);
  return job && (job.status === JobStatus.PENDING || job.status === JobStatus.RUNNING) ? job : undefined;
}

export interface OriginalTimers {
  list(): Promise<TimerInfo[]>;
  /** Throws `AppError('not_found')`. */
  get(id: string): Promise<TimerInfo>;
  /** Throws `not_found`, or `conflict` while the job is running (its participant's lock is free again soon). */
  cancel(id: string): Promise<TimerInfo>;
}

export function createOriginalTimers(options: { store: Store; lock: ParticipantLock; clock: Clock }): OriginalTimers {
  const { store, lock, clock } = options;
  const notFound = (id: string) => new AppError('not_found', `Timer not found: timer with ID ${id} not found`);

  async function cancelNow(id: string): Promise<TimerInfo> {
    const now = clock.now();
    return store.transaction(async (tx) => {
      const job = await findTimerJob(tx, id);
      if (!job) throw notFound(id);
      const info = timerInfo(job, now);
      if (!(await tx.jobs.cancelById(job.id, now))) {
        throw new AppError('conflict', `timer ${id} is running right now; cancel it again in a moment`);
      }
      // A timer named in the participant's data (dailyPromptReminderTimerID…) is not pending any more.
      const dataKey = TIMER_ID_DATA_KEY[job.kind as TimerJobKind];
      if (dataKey && job.participantId && (await tx.flowStates.get(job.participantId))) {
        await writeData(tx, job.participantId, { [dataKey]: '' }, now);
      }
      await tx.events.record({
        ...(job.participantId ? { participantId: job.participantId } : {}),
        type: 'timer-cancelled',
        data: { timer_id: info.id, job_id: job.id, kind: job.kind, due_at: info.due_at, source: 'api' },
        createdAt: now,
      });
      return info;
    });
  }

  return {
    async list() {
      const now = clock.now();
      return (await store.jobs.listPending()).map((job) => timerInfo(job, now));
    },
    async get(id) {
      const job = await findTimerJob(store, id);
      if (!job) throw notFound(id);
      return timerInfo(job, clock.now());
    },
    async cancel(id) {
      const job = await findTimerJob(store, id);
      if (!job) throw notFound(id);
      // Under the participant's lock the job is not halfway through a run: a schedule's occurrence has either not
      // started or already enqueued the next one, which is then the one cancelled.
      return job.participantId ? lock.run(job.participantId, () => cancelNow(id)) : cancelNow(id);
    },
  };
}
