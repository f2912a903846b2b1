import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../src/domain/data-keys.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import type { Participant } from '../../src/domain/participant.ts';
import { readValue } from '../../src/domain/participant-data.ts';
import type { ToolContext, ToolResult } from '../../src/engine/tool.ts';
import { createToolRegistry, toToolDefinition } from '../../src/engine/tool-registry.ts';
import { createManualClock, type ManualClock } from '../../src/scheduling/clock.ts';
import { DAILY_PROMPT_JOB, dailyPromptJobKey } from '../../src/scheduling/daily-prompt-jobs.ts';
import { parseScheduleRegistry } from '../../src/scheduling/schedule-registry.ts';
import type { Store } from '../../src/store/store.ts';
import { createSchedulerTool } from '../../src/tools/scheduler-tool.ts';
import { createMemoryStore, enrollParticipant, seededRandom } from './scheduling-fixtures.ts';

const CONTEXT: ToolContext = { participantId: 'p_1', module: 'INTAKE', sourceMessageId: undefined };

interface Setup {
  store: Store;
  clock: ManualClock;
  tool: ReturnType<typeof createSchedulerTool>;
  call(args: Record<string, unknown>): Promise<ToolResult>;
  enqueued: { count: number };
}

let open: Store | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

async function setup(
  start: string,
  options: { participant?: Partial<Participant>; prepTimeMinutes?: number } = {},
): Promise<Setup> {
  const store = await createMemoryStore();
  open = store;
  const clock = createManualClock(new Date(start));
  await enrollParticipant(store, clock.now(), options.participant);
  const enqueued = { count: 0 };
  const tool = createSchedulerTool({
    store,
    clock,
    newId: sequentialIds(),
    random: seededRandom(1),
    config: { prepTimeMinutes: options.prepTimeMinutes ?? 10 },
    onJobEnqueued: () => {
      enqueued.count += 1;
    },
  });
  const registry = createToolRegistry([tool]);
  const call = (args: Record<string, unknown>) =>
    registry.execute({ id: 'call_1', name: 'scheduler', arguments: JSON.stringify(args) }, CONTEXT, ['scheduler']);
  return { store, clock, tool, call, enqueued };
}

async function storedSchedules(store: Store) {
  return parseScheduleRegistry(await readValue(store, 'p_1', DataKey.scheduleRegistry));
}

describe('create', () => {
  it('creates a fixed schedule in America/Toronto by default, firing today at target − prep time', async () => {
    // 07:00 in Toronto.
    const { store, call, enqueued } = await setup('2026-03-02T12:00:00Z');

    const result = await call({ action: 'create', type: 'fixed', fixed_time: '09:00' });

    expect(result).toMatchObject({
      status: 'success',
      schedule: {
        id: 'sched_1',
        type: 'fixed',
        fixed_time: '09:00',
        timezone: 'America/Toronto',
        created_at: '2026-03-02T12:00:00.000Z',
        timer_id: 'job_2',
      },
      next_prompt_at: '2026-03-02T13:50:00.000Z',
      next_prompt_local: '2026-03-02 08:50 (America/Toronto, UTC-05:00)',
    });
    expect(result['replaced_schedule_id']).toBeUndefined();
    expect(result.message).toMatch(/09:00/);
    expect(enqueued.count).toBe(1);

    const [job] = await store.jobs.listPending({ participantId: 'p_1' });
    expect(job).toMatchObject({
      id: 'job_2',
      kind: DAILY_PROMPT_JOB,
      dedupKey: dailyPromptJobKey('p_1'),
      runAt: new Date('2026-03-02T13:50:00Z'),
      maxAttempts: 3,
      payload: {
        schedule_id: 'sched_1',
        local_date: '2026-03-02',
        target_at: '2026-03-02T14:00:00.000Z',
        fire_at: '2026-03-02T13:50:00.000Z',
      },
    });
    expect(await storedSchedules(store)).toEqual([result['schedule']]);
    const [event] = await store.events.list({ type: 'schedule-created' });
    expect(event?.data).toMatchObject({ replaced_schedule_ids: [] });
  });

  it('fires tomorrow when today’s target − prep time has passed, even if the target itself has not', async () => {
    // 08:55 in Toronto: 09:00 is still ahead but the 08:50 send time is not.
    const { call } = await setup('2026-03-02T13:55:00Z');
    const result = await call({ action: 'create', type: 'fixed', fixed_time: '09:00' });
    expect(result['next_prompt_at']).toBe('2026-03-03T13:50:00.000Z');
  });

  it('honours the configured prep time', async () => {
    const { call } = await setup('2026-03-02T13:55:00Z', { prepTimeMinutes: 0 });
    const result = await call({ action: 'create', type: 'fixed', fixed_time: '09:00' });
    expect(result['next_prompt_at']).toBe('2026-03-02T14:00:00.000Z');
  });

  it('decides "today" in the schedule’s zone, not the server’s', async () => {
    // 06:00 UTC on 3 March is still 22:00 on 2 March in Los Angeles: 23:00 tonight is today's target.
    const { call } = await setup('2026-03-03T06:00:00Z');
    const result = await call({
      action: 'create',
      type: 'fixed',
      fixed_time: '23:00',
      timezone: 'America/Los_Angeles',
    });
    expect(result['next_prompt_at']).toBe('2026-03-03T06:50:00.000Z');
    expect(result['next_prompt_local']).toBe('2026-03-02 22:50 (America/Los_Angeles, UTC-08:00)');
  });

  it("uses the participant's own time zone when the call names none", async () => {
    const { call } = await setup('2026-03-02T06:00:00Z', { participant: { timezone: 'Europe/Paris' } });
    const fixed = await call({ action: 'create', type: 'fixed', fixed_time: '09:00' });
    expect(fixed).toMatchObject({ schedule: { timezone: 'Europe/Paris' }, next_prompt_at: '2026-03-02T07:50:00.000Z' });
    const random = await call({
      action: 'create',
      type: 'random',
      random_start_time: '10:00',
      random_end_time: '11:00',
    });
    expect(random).toMatchObject({ schedule: { timezone: 'Europe/Paris' } });
  });

  it('lets an explicit timezone win over the participant’s, and canonicalises its spelling', async () => {
    const { call } = await setup('2026-03-02T06:00:00Z', { participant: { timezone: 'Europe/Paris' } });
    const result = await call({ action: 'create', type: 'fixed', fixed_time: '09:00', timezone: 'asia/tokyo' });
    expect(result).toMatchObject({ schedule: { timezone: 'Asia/Tokyo' } });
  });

  it('defaults a random schedule to UTC and draws its minute inside the window', async () => {
    const { call } = await setup('2026-03-02T06:00:00Z');
    const result = await call({
      action: 'create',
      type: 'random',
      random_start_time: '10:00',
      random_end_time: '12:00',
      fixed_time: '',
    });
    expect(result).toMatchObject({
      status: 'success',
      schedule: { type: 'random', random_start_time: '10:00', random_end_time: '12:00', timezone: 'UTC' },
    });
    expect(result['schedule']).not.toHaveProperty('fixed_time');
    const target = new Date(result['target_at'] as string);
    expect(target.getTime()).toBeGreaterThanOrEqual(Date.parse('2026-03-02T10:00:00Z'));
    expect(target.getTime()).toBeLessThanOrEqual(Date.parse('2026-03-02T12:00:00Z'));
    expect(Date.parse(result['next_prompt_at'] as string)).toBe(target.getTime() - 10 * 60_000);
  });

  it('replaces the existing schedule and says so: one schedule, one pending job', async () => {
    const { store, call } = await setup('2026-03-02T12:00:00Z');
    const first = await call({ action: 'create', type: 'fixed', fixed_time: '09:00' });
    const second = await call({ action: 'create', type: 'fixed', fixed_time: '18:30' });

    expect(second).toMatchObject({ status: 'success', replaced_schedule_id: 'sched_1', schedule: { id: 'sched_3' } });
    expect(second.message).toMatch(/replaced the previous schedule \(every day at 09:00/);
    expect((await storedSchedules(store)).map((schedule) => schedule.id)).toEqual(['sched_3']);
    const pending = await store.jobs.listPending({ participantId: 'p_1' });
    expect(pending.map((job) => job.id)).toEqual([(second['schedule'] as { timer_id: string }).timer_id]);
    const firstJobId = (first['schedule'] as { timer_id: string }).timer_id;
    expect((await store.jobs.get(firstJobId))?.status).toBe('cancelled');
  });
});

describe('list and delete', () => {
  it('lists the schedule with its next prompt time, and an empty list when there is none', async () => {
    const { call } = await setup('2026-03-02T12:00:00Z');
    const empty = await call({ action: 'list' });
    expect(empty).toMatchObject({ status: 'success', schedules: [] });
    expect(empty.message).toMatch(/no daily prompt schedule/);

    await call({ action: 'create', type: 'fixed', fixed_time: '09:00' });
    const listed = await call({ action: 'list' });
    expect(listed).toMatchObject({
      status: 'success',
      schedules: [{ id: 'sched_1', fixed_time: '09:00', next_prompt_at: '2026-03-02T13:50:00.000Z' }],
    });
    expect(listed.message).toMatch(/never show them to the participant/);
  });

  it('deletes a schedule and cancels its job', async () => {
    const { store, call } = await setup('2026-03-02T12:00:00Z');
    const created = await call({ action: 'create', type: 'fixed', fixed_time: '09:00' });
    const deleted = await call({ action: 'delete', schedule_id: 'sched_1' });

    expect(deleted).toMatchObject({ status: 'success', removed_schedule_id: 'sched_1' });
    expect(await storedSchedules(store)).toEqual([]);
    expect(await store.jobs.listPending({ participantId: 'p_1' })).toEqual([]);
    const jobId = (created['schedule'] as { timer_id: string }).timer_id;
    expect((await store.jobs.get(jobId))?.status).toBe('cancelled');
  });

  it('returns an error naming the known ids when deleting an unknown schedule', async () => {
    const { call } = await setup('2026-03-02T12:00:00Z');
    await call({ action: 'create', type: 'fixed', fixed_time: '09:00' });
    const result = await call({ action: 'delete', schedule_id: 'sched_404' });
    expect(result).toMatchObject({ status: 'error', schedule_ids: ['sched_1'] });
    expect(result.message).toMatch(/No schedule with id "sched_404"/);
  });
});

describe('validation', () => {
  const cases: { name: string; args: Record<string, unknown>; field: string; problem: RegExp }[] = [
    { name: 'create without type', args: { action: 'create' }, field: 'type', problem: /required/ },
    {
      name: 'fixed without fixed_time',
      args: { action: 'create', type: 'fixed' },
      field: 'fixed_time',
      problem: /required/,
    },
    {
      name: 'a time that is not HH:MM',
      args: { action: 'create', type: 'fixed', fixed_time: '9am' },
      field: 'fixed_time',
      problem: /HH:MM/,
    },
    {
      name: 'random without its window',
      args: { action: 'create', type: 'random', random_start_time: '10:00' },
      field: 'random_end_time',
      problem: /required/,
    },
    {
      name: 'a window whose start is not before its end',
      args: { action: 'create', type: 'random', random_start_time: '12:00', random_end_time: '12:00' },
      field: 'random_end_time',
      problem: /must be after random_start_time/,
    },
    {
      name: 'an unknown time zone',
      args: { action: 'create', type: 'fixed', fixed_time: '09:00', timezone: 'Mars/Base' },
      field: 'timezone',
      problem: /IANA time zone/,
    },
    { name: 'delete without schedule_id', args: { action: 'delete' }, field: 'schedule_id', problem: /required/ },
    { name: 'an unknown action', args: { action: 'update' }, field: 'action', problem: /create|list|delete/ },
  ];

  for (const { name, args, field, problem } of cases) {
    it(`rejects ${name}, naming the field`, async () => {
      const { store, call } = await setup('2026-03-02T12:00:00Z');
      const result = await call(args);
      expect(result.status).toBe('error');
      const problems = result['invalid_fields'] as { field: string; problem: string }[];
      expect(problems.find((entry) => entry.field === field)?.problem).toMatch(problem);
      expect(await store.jobs.listPending()).toEqual([]);
    });
  }
});

describe('the definition the model sees', () => {
  it('describes every parameter and warns that schedule ids are internal', async () => {
    const { tool } = await setup('2026-03-02T12:00:00Z');
    const definition = toToolDefinition(tool);
    expect(definition.name).toBe('scheduler');
    expect(definition.description).toMatch(/never show or mention them to the participant/);
    const parameters = definition.parameters as {
      properties: Record<string, { description?: string; enum?: string[] }>;
      required: string[];
    };
    expect(Object.keys(parameters.properties)).toEqual([
      'action',
      'type',
      'fixed_time',
      'timezone',
      'random_start_time',
      'random_end_time',
      'schedule_id',
    ]);
    expect(parameters.required).toEqual(['action']);
    expect(parameters.properties['action']?.enum).toEqual(['create', 'list', 'delete']);
    for (const property of Object.values(parameters.properties)) expect(property.description).toBeTruthy();
    expect(parameters.properties['schedule_id']?.description).toMatch(/never show it to the participant/);
  });
});
