/**
 * The `scheduleRegistry` data key (specification §Data keys, 9): a JSON array of `ScheduleInfo`, snake_case as in the
 * contract. PromptPipe keeps at most one schedule per participant (create replaces), but the stored shape stays an
 * array.
 */
import { DataKey } from '../domain/data-keys.ts';
import { readValue, writeData } from '../domain/participant-data.ts';
import type { StoreRepositories } from '../store/store.ts';

export const ScheduleType = { FIXED: 'fixed', RANDOM: 'random' } as const;
export type ScheduleType = (typeof ScheduleType)[keyof typeof ScheduleType];

/**
 * One daily schedule. Times are local `HH:MM` in `timezone`; `timer_id` is the id of its pending `daily_prompt` job.
 */
export interface ScheduleInfo {
  id: string;
  type: ScheduleType;
  fixed_time?: string;
  random_start_time?: string;
  random_end_time?: string;
  /** IANA zone. */
  timezone: string;
  /** RFC 3339. */
  created_at: string;
  timer_id: string;
}

type Repositories = Pick<StoreRepositories, 'flowStates'>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalText(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function parseSchedule(value: unknown): ScheduleInfo | undefined {
  if (!isRecord(value)) return undefined;
  const { id, type, timezone, created_at: createdAt, timer_id: timerId } = value;
  if (typeof id !== 'string' || id === '') return undefined;
  if (type !== ScheduleType.FIXED && type !== ScheduleType.RANDOM) return undefined;
  if (typeof timezone !== 'string' || timezone === '') return undefined;
  const schedule: ScheduleInfo = {
    id,
    type,
    timezone,
    created_at: typeof createdAt === 'string' ? createdAt : '',
    timer_id: typeof timerId === 'string' ? timerId : '',
  };
  const fixedTime = optionalText(value['fixed_time']);
  const randomStart = optionalText(value['random_start_time']);
  const randomEnd = optionalText(value['random_end_time']);
  if (fixedTime) schedule.fixed_time = fixedTime;
  if (randomStart) schedule.random_start_time = randomStart;
  if (randomEnd) schedule.random_end_time = randomEnd;
  return schedule;
}

/** Reads the registry leniently: a corrupt value or entry is dropped rather than breaking the participant. */
export function parseScheduleRegistry(raw: string | undefined): ScheduleInfo[] {
  if (!raw) return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  return value.map(parseSchedule).filter((schedule): schedule is ScheduleInfo => schedule !== undefined);
}

export async function readSchedules(repositories: Repositories, participantId: string): Promise<ScheduleInfo[]> {
  return parseScheduleRegistry(await readValue(repositories, participantId, DataKey.scheduleRegistry));
}

export async function writeSchedules(
  repositories: Repositories,
  participantId: string,
  schedules: readonly ScheduleInfo[],
  now: Date,
): Promise<void> {
  await writeData(repositories, participantId, { [DataKey.scheduleRegistry]: JSON.stringify(schedules) }, now);
}
