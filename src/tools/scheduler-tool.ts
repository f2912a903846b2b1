/**
 * The `scheduler` tool (specification §Tools): create, list and delete the participant's daily habit-prompt schedule.
 *
 * A participant has at most one schedule; `create` replaces the current one and says so. Each schedule owns one
 * durable `daily_prompt` job (see scheduling/daily-prompt-jobs.ts); the job and the `scheduleRegistry` entry are
 * written in one transaction, so they never disagree.
 */

import { z } from 'zod';
import type { Clock } from '../domain/clock.ts';
import type { NewId } from '../domain/ids.ts';
import { parseLocalTime } from '../domain/local-time.ts';
import { defineTool, errorResult, type Tool, type ToolContext, type ToolResult } from '../engine/tool.ts';
import { type ArmedSchedule, armSchedule, disarmSchedule, type RandomSource } from '../scheduling/daily-prompt-jobs.ts';
import { readSchedules, type ScheduleInfo, ScheduleType, writeSchedules } from '../scheduling/schedule-registry.ts';
import { canonicalTimeZone, formatLocalInstant, isValidTimeZone, minutesOfDay } from '../scheduling/schedule-time.ts';
import type { Store, StoreRepositories } from '../store/store.ts';

export const SCHEDULER_TOOL_NAME = 'scheduler';

/** Zones used when neither the call nor the participant names one (specification §Tools, `scheduler`). */
export const DEFAULT_FIXED_TIME_ZONE = 'America/Toronto';
export const DEFAULT_RANDOM_TIME_ZONE = 'UTC';

const HH_MM_PATTERN = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Models often send "" or null for an argument they mean to leave out: treat both as absent. */
function optional<Schema extends z.ZodType>(schema: Schema) {
  return z.preprocess((value) => (value === '' || value === null ? undefined : value), schema.optional());
}

function localTimeField(description: string) {
  return optional(
    z
      .string()
      .regex(HH_MM_PATTERN, 'must be a 24-hour local time written HH:MM, e.g. "09:00" or "18:30"')
      .describe(description),
  );
}

export const schedulerToolSchema = z
  .object({
    action: z
      .enum(['create', 'list', 'delete'])
      .describe(
        'create: set the daily prompt time (replaces the current schedule); list: show the current schedule; delete: remove the schedule with schedule_id.',
      ),
    type: optional(
      z
        .enum(['fixed', 'random'])
        .describe(
          'For create. fixed: every day at fixed_time. random: every day at a random minute between random_start_time and random_end_time.',
        ),
    ),
    fixed_time: localTimeField('For create with type fixed: the local target time, HH:MM (24-hour).'),
    timezone: optional(
      z
        .string()
        .refine(isValidTimeZone, 'must be an IANA time zone such as "America/Toronto" or "Europe/Paris"')
        .describe(
          "Optional IANA time zone for the times. Leave it out to use the participant's own time zone (or the default).",
        ),
    ),
    random_start_time: localTimeField('For create with type random: the start of the daily window, HH:MM (24-hour).'),
    random_end_time: localTimeField(
      'For create with type random: the end of the daily window, HH:MM, after the start.',
    ),
    schedule_id: optional(
      z.string().min(1).describe('For delete: the id from list or create. Internal: never show it to the participant.'),
    ),
  })
  .superRefine((args, context) => {
    const require = (field: keyof typeof args, message: string) => {
      if (args[field] === undefined) context.addIssue({ code: 'custom', path: [field], message });
    };
    if (args.action === 'delete') require('schedule_id', 'is required to delete a schedule (call list to find it)');
    if (args.action !== 'create') return;
    require('type', 'is required to create a schedule: "fixed" or "random"');
    if (args.type === 'fixed') require('fixed_time', 'is required for a fixed schedule (HH:MM)');
    if (args.type !== 'random') return;
    require('random_start_time', 'is required for a random schedule (HH:MM)');
    require('random_end_time', 'is required for a random schedule (HH:MM)');
    const start = parseLocalTime(args.random_start_time ?? '');
    const end = parseLocalTime(args.random_end_time ?? '');
    if (start && end && minutesOfDay(start) >= minutesOfDay(end)) {
      context.addIssue({
        code: 'custom',
        path: ['random_end_time'],
        message: `must be after random_start_time (${args.random_start_time}); windows across midnight are not supported`,
      });
    }
  });

export type SchedulerToolArguments = z.output<typeof schedulerToolSchema>;

export interface SchedulerToolOptions {
  store: Store;
  clock: Clock;
  newId: NewId;
  /** Draws each day's minute of a random schedule; defaults to `Math.random`. */
  random?: RandomSource;
  config: { prepTimeMinutes: number };
  /** Called after a job is committed, so the job runner re-computes its wake-up time (`runner.notify`). */
  onJobEnqueued?: () => void;
}

function describeSchedule(schedule: ScheduleInfo): string {
  const when =
    schedule.type === ScheduleType.FIXED
      ? `every day at ${schedule.fixed_time}`
      : `every day at a random time between ${schedule.random_start_time} and ${schedule.random_end_time}`;
  return `${when} (${schedule.timezone})`;
}

/** When the schedule's pending job fires, read through `store` (the tool's own). */
async function nextPromptOf(store: Pick<StoreRepositories, 'jobs'>, schedule: ScheduleInfo) {
  const job = schedule.timer_id ? await store.jobs.get(schedule.timer_id) : undefined;
  if (!job || (job.status !== 'pending' && job.status !== 'running')) return {};
  return {
    next_prompt_at: job.runAt.toISOString(),
    next_prompt_local: formatLocalInstant(job.runAt, schedule.timezone),
  };
}

export function createSchedulerTool(options: SchedulerToolOptions): Tool<typeof schedulerToolSchema> {
  const { store, clock, newId, config } = options;
  const arming = { store, newId, random: options.random ?? Math.random, prepTimeMinutes: config.prepTimeMinutes };

  /** The call's zone, else the participant's own, else the contract's default for the type. */
  async function timeZoneFor(args: SchedulerToolArguments, participantId: string): Promise<string> {
    const requested = args.timezone ? canonicalTimeZone(args.timezone) : undefined;
    if (requested) return requested;
    const participant = await store.participants.get(participantId);
    const own = participant?.timezone ? canonicalTimeZone(participant.timezone) : undefined;
    if (own) return own;
    return args.type === ScheduleType.RANDOM ? DEFAULT_RANDOM_TIME_ZONE : DEFAULT_FIXED_TIME_ZONE;
  }

  async function create(args: SchedulerToolArguments, context: ToolContext): Promise<ToolResult> {
    const { participantId } = context;
    if (!(await store.participants.get(participantId))) {
      return errorResult(`Participant ${participantId} is not enrolled; no schedule was created.`);
    }
    const now = clock.now();
    const type = args.type === ScheduleType.RANDOM ? ScheduleType.RANDOM : ScheduleType.FIXED;
    const draft: ScheduleInfo = {
      id: newId('sched'),
      type,
      ...(type === ScheduleType.FIXED
        ? { fixed_time: args.fixed_time ?? '' }
        : { random_start_time: args.random_start_time ?? '', random_end_time: args.random_end_time ?? '' }),
      timezone: await timeZoneFor(args, participantId),
      created_at: now.toISOString(),
      timer_id: '',
    };
    const { armed, replaced } = await store.transaction(async () => {
      const previous = await readSchedules(store, participantId);
      for (const schedule of previous) await disarmSchedule(store, participantId, schedule, now);
      // At most one schedule per participant: the new one takes the place of all earlier ones.
      await writeSchedules(store, participantId, [], now);
      const armedSchedule: ArmedSchedule = await armSchedule(arming, { participantId, schedule: draft, now });
      await store.events.record({
        participantId,
        type: 'schedule-created',
        data: {
          schedule: armedSchedule.schedule,
          replaced_schedule_ids: previous.map((schedule) => schedule.id),
          next_prompt_at: armedSchedule.job.runAt.toISOString(),
        },
        ...(context.sourceMessageId ? { sourceMessageId: context.sourceMessageId } : {}),
        createdAt: now,
      });
      return { armed: armedSchedule, replaced: previous };
    });
    options.onJobEnqueued?.();

    const { schedule, occurrence } = armed;
    const replacedSchedule = replaced[0];
    const nextLocal = formatLocalInstant(occurrence.fireAt, schedule.timezone);
    const message = [
      `Daily habit prompt scheduled ${describeSchedule(schedule)}.`,
      `Each prompt is sent ${config.prepTimeMinutes} minutes before the target time; the next one goes out ${nextLocal}.`,
      replacedSchedule
        ? `This replaced the previous schedule (${describeSchedule(replacedSchedule)}); a participant has only one.`
        : '',
      'Tell the participant the time in plain words; never show schedule ids.',
    ]
      .filter((sentence) => sentence !== '')
      .join(' ');
    return {
      status: 'success',
      message,
      schedule,
      ...(replacedSchedule ? { replaced_schedule_id: replacedSchedule.id } : {}),
      next_prompt_at: occurrence.fireAt.toISOString(),
      next_prompt_local: nextLocal,
      target_at: occurrence.targetAt.toISOString(),
    };
  }

  async function list(context: ToolContext): Promise<ToolResult> {
    const schedules = await readSchedules(store, context.participantId);
    const described = await Promise.all(
      schedules.map(async (schedule) => ({ ...schedule, ...(await nextPromptOf(store, schedule)) })),
    );
    const message =
      schedules.length === 0
        ? 'The participant has no daily prompt schedule.'
        : `The participant has a daily prompt schedule: ${schedules.map(describeSchedule).join('; ')}. Schedule ids are internal; never show them to the participant.`;
    return { status: 'success', message, schedules: described };
  }

  async function remove(args: SchedulerToolArguments, context: ToolContext): Promise<ToolResult> {
    const { participantId } = context;
    const scheduleId = args.schedule_id ?? '';
    const now = clock.now();
    const removed = await store.transaction(async () => {
      const schedules = await readSchedules(store, participantId);
      const target = schedules.find((schedule) => schedule.id === scheduleId);
      if (!target) return { found: false as const, known: schedules.map((schedule) => schedule.id) };
      await disarmSchedule(store, participantId, target, now);
      await writeSchedules(
        store,
        participantId,
        schedules.filter((schedule) => schedule.id !== scheduleId),
        now,
      );
      await store.events.record({
        participantId,
        type: 'schedule-deleted',
        data: { schedule: target },
        ...(context.sourceMessageId ? { sourceMessageId: context.sourceMessageId } : {}),
        createdAt: now,
      });
      return { found: true as const, schedule: target };
    });
    if (!removed.found) {
      const known =
        removed.known.length > 0
          ? `Current schedule ids: ${removed.known.join(', ')}.`
          : 'The participant has no schedule.';
      return errorResult(`No schedule with id "${scheduleId}". ${known} Nothing was deleted.`, {
        schedule_ids: removed.known,
      });
    }
    return {
      status: 'success',
      message: `Deleted the daily prompt schedule (${describeSchedule(removed.schedule)}); no more scheduled prompts will be sent.`,
      removed_schedule_id: removed.schedule.id,
    };
  }

  return defineTool({
    name: SCHEDULER_TOOL_NAME,
    description: [
      "Manage the participant's daily habit-prompt schedule.",
      'create sets the daily time: type "fixed" with fixed_time (HH:MM), or type "random" with a window (random_start_time to random_end_time; a new random minute each day).',
      'A participant has at most one schedule: create replaces the current one.',
      `The habit prompt is sent ${options.config.prepTimeMinutes} minutes before the target time.`,
      "Times are local to the participant's time zone when it is known (else America/Toronto for fixed, UTC for random) unless you pass timezone.",
      'list shows the schedule; delete removes it by schedule_id.',
      'Schedule ids are internal identifiers for your tool calls only: never show or mention them to the participant; describe a schedule by its time.',
    ].join(' '),
    schema: schedulerToolSchema,
    async execute(args, context) {
      if (args.action === 'create') return create(args, context);
      if (args.action === 'delete') return remove(args, context);
      return list(context);
    },
  });
}
