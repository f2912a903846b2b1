/**
 * How a daily schedule becomes durable jobs. Each schedule has exactly one pending `daily_prompt` job (dedup key
 * `daily_prompt:{participantId}`), due at the occurrence's target time minus the prep time. When it fires, the
 * handler enqueues the next occurrence the same way, so the recurrence survives restarts and is computed per local
 * date (see schedule-time.ts) rather than by adding 24 hours.
 */

import type { NewId } from '../domain/ids.ts';
import { type LocalTime, parseLocalTime } from '../domain/local-time.ts';
import type { Job, StoreRepositories } from '../store/store.ts';
import { readSchedules, type ScheduleInfo, ScheduleType, writeSchedules } from './schedule-registry.ts';
import {
  addLocalDays,
  compareLocalDates,
  instantAtLocalTime,
  localDateOf,
  randomTimeInWindow,
} from './schedule-time.ts';

export const DAILY_PROMPT_JOB = 'daily_prompt';
export const dailyPromptJobKey = (participantId: string): string => `daily_prompt:${participantId}`;
/** Three attempts with exponential back-off, as for every timer. */
export const DAILY_PROMPT_MAX_ATTEMPTS = 3;

/** A number in [0, 1), like `Math.random`; injected so tests are repeatable. */
export type RandomSource = () => number;

/** The payload of a `daily_prompt` job. */
export interface DailyPromptPayload extends Record<string, unknown> {
  schedule_id: string;
  /** `YYYY-MM-DD` in the schedule's zone: the day this occurrence belongs to. */
  local_date: string;
  /** RFC 3339: the schedule's target instant (e.g. 09:00 local). */
  target_at: string;
  /** RFC 3339: target − prep time, when the prompt is due. Lateness is measured from here, even after retries. */
  fire_at: string;
}

/** One day's occurrence of a schedule. */
export interface DailyOccurrence {
  localDate: string;
  targetAt: Date;
  fireAt: Date;
}

export interface PlanOptions {
  /** The occurrence must fire strictly after this instant ("still in the future"). */
  after: Date;
  /** The first local date to consider; defaults to the local date of `after` in the schedule's zone ("today"). */
  fromLocalDate?: string;
  prepTimeMinutes: number;
  random: RandomSource;
}

/** How many local days to look ahead before concluding a schedule can never fire (a corrupt time, not a gap). */
const MAX_DAYS_AHEAD = 4;

/** The schedule's local target time on one day: the fixed time, or a fresh random minute inside the window. */
export function targetTimeFor(schedule: ScheduleInfo, random: RandomSource): LocalTime {
  if (schedule.type === ScheduleType.FIXED) {
    const fixed = parseLocalTime(schedule.fixed_time ?? '');
    if (!fixed) throw new RangeError(`schedule ${schedule.id} has no valid fixed_time`);
    return fixed;
  }
  const start = parseLocalTime(schedule.random_start_time ?? '');
  const end = parseLocalTime(schedule.random_end_time ?? '');
  if (!start || !end) throw new RangeError(`schedule ${schedule.id} has no valid random window`);
  return randomTimeInWindow(start, end, random);
}

/**
 * The first occurrence, from `fromLocalDate` on, whose firing (target − prep) is after `after`. "Today" is the
 * local date in the schedule's zone, not the server's. A random schedule draws its minute anew for each day
 * considered; a draw already in the past moves the occurrence to the next day.
 */
export function planOccurrence(schedule: ScheduleInfo, options: PlanOptions): DailyOccurrence {
  const prepMs = options.prepTimeMinutes * 60_000;
  const today = localDateOf(options.after, schedule.timezone);
  // A start date in the past (after a long outage) jumps straight to today instead of walking every missed day:
  // every occurrence of an earlier local date is over.
  const requested = options.fromLocalDate ?? today;
  let localDate = compareLocalDates(requested, today) < 0 ? today : requested;
  for (let day = 0; day < MAX_DAYS_AHEAD; day += 1) {
    const targetAt = instantAtLocalTime(localDate, targetTimeFor(schedule, options.random), schedule.timezone);
    const fireAt = new Date(targetAt.getTime() - prepMs);
    if (fireAt.getTime() > options.after.getTime()) return { localDate, targetAt, fireAt };
    localDate = addLocalDays(localDate, 1);
  }
  throw new RangeError(`schedule ${schedule.id} has no occurrence after ${options.after.toISOString()}`);
}

/** Reads a job's payload back; undefined when it is not a daily-prompt payload. */
export function parseDailyPromptPayload(payload: Record<string, unknown>): DailyPromptPayload | undefined {
  const { schedule_id: scheduleId, local_date: localDate, target_at: targetAt, fire_at: fireAt } = payload;
  if (typeof scheduleId !== 'string' || typeof localDate !== 'string') return undefined;
  if (typeof targetAt !== 'string' || typeof fireAt !== 'string') return undefined;
  if (Number.isNaN(Date.parse(targetAt)) || Number.isNaN(Date.parse(fireAt))) return undefined;
  return { schedule_id: scheduleId, local_date: localDate, target_at: targetAt, fire_at: fireAt };
}

/**
 * What arming is built from, once, by whoever arms schedules (the daily-prompt handler, the scheduler tool, the
 * participant service, the migration): the store it writes through, which joins the caller's unit of work, and the
 * settings every occurrence is planned with.
 */
export interface DailyPromptJobDependencies extends Pick<PlanOptions, 'prepTimeMinutes' | 'random'> {
  store: Pick<StoreRepositories, 'jobs' | 'flowStates'>;
  newId: NewId;
}

export interface ArmRequest extends Pick<PlanOptions, 'fromLocalDate'> {
  participantId: string;
  schedule: ScheduleInfo;
  now: Date;
}

export interface ArmedSchedule {
  schedule: ScheduleInfo;
  job: Job;
  occurrence: DailyOccurrence;
}

/**
 * Plans the schedule's next occurrence, enqueues its `daily_prompt` job (replacing any pending one of the
 * participant) and stores the job id as the schedule's `timer_id` in the registry, inserting the schedule if it
 * is not there yet. Writes through the dependencies' store inside the caller's unit of work, so the job and the
 * registry never disagree.
 */
export async function armSchedule(
  dependencies: DailyPromptJobDependencies,
  request: ArmRequest,
): Promise<ArmedSchedule> {
  const { store } = dependencies;
  const { participantId, now } = request;
  const occurrence = planOccurrence(request.schedule, {
    after: now,
    prepTimeMinutes: dependencies.prepTimeMinutes,
    random: dependencies.random,
    ...(request.fromLocalDate ? { fromLocalDate: request.fromLocalDate } : {}),
  });
  const payload: DailyPromptPayload = {
    schedule_id: request.schedule.id,
    local_date: occurrence.localDate,
    target_at: occurrence.targetAt.toISOString(),
    fire_at: occurrence.fireAt.toISOString(),
  };
  const job = await store.jobs.enqueue(
    {
      id: dependencies.newId('job'),
      kind: DAILY_PROMPT_JOB,
      participantId,
      runAt: occurrence.fireAt,
      payload,
      maxAttempts: DAILY_PROMPT_MAX_ATTEMPTS,
      dedupKey: dailyPromptJobKey(participantId),
    },
    now,
  );
  const schedule: ScheduleInfo = { ...request.schedule, timer_id: job.id };
  const schedules = await readSchedules(store, participantId);
  const position = schedules.findIndex((existing) => existing.id === schedule.id);
  if (position >= 0) schedules[position] = schedule;
  else schedules.push(schedule);
  await writeSchedules(store, participantId, schedules, now);
  return { schedule, job, occurrence };
}

/**
 * Re-arms a participant's schedule when it has no pending job, e.g. after a paused participant is made active
 * again (pausing cancels every job). Returns the armed schedule, or undefined when there is nothing to do.
 */
export async function ensureDailyPromptJob(
  dependencies: DailyPromptJobDependencies,
  request: { participantId: string; now: Date },
): Promise<ArmedSchedule | undefined> {
  const { store } = dependencies;
  const [schedule] = await readSchedules(store, request.participantId);
  if (!schedule) return undefined;
  if (await store.jobs.getPendingByKey(dailyPromptJobKey(request.participantId))) return undefined;
  return armSchedule(dependencies, { ...request, schedule });
}

/**
 * Cancels the pending job of a schedule (by the participant's key, and by `timer_id` for older entries), through the
 * store it is given, in the caller's unit of work.
 */
export async function disarmSchedule(
  store: Pick<StoreRepositories, 'jobs'>,
  participantId: string,
  schedule: ScheduleInfo,
  now: Date,
): Promise<void> {
  await store.jobs.cancelByKey(dailyPromptJobKey(participantId), now);
  if (schedule.timer_id) await store.jobs.cancelById(schedule.timer_id, now);
}
