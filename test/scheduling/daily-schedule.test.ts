/**
 * Daily recurrence end to end on the manual clock: a week of prompts, random windows, daylight-saving weeks,
 * restarts of the process (file-backed SQLite), and re-arming after a pause.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DONE_POLL } from '../../src/domain/polls.ts';
import { DAILY_PROMPT_JOB, ensureDailyPromptJob, planOccurrence } from '../../src/scheduling/daily-prompt-jobs.ts';
import type { ScheduleInfo } from '../../src/scheduling/schedule-registry.ts';
import { addLocalDays, formatLocalInstant } from '../../src/scheduling/schedule-time.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { createDeliveryHarness } from './daily-prompt-harness.ts';
import { hours, minutes, seededRandom } from './scheduling-fixtures.ts';

const DAY = hours(24);
const stores: Store[] = [];
const directories: string[] = [];

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => undefined);
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

async function track(store: Promise<Store>): Promise<Store> {
  const opened = await store;
  stores.push(opened);
  return opened;
}

async function promptTimes(store: Store, timeZone: string): Promise<string[]> {
  const events = await store.events.list({ participantId: 'p_1', type: 'prompt-sent' });
  return events.map((event) => formatLocalInstant(event.createdAt, timeZone));
}

describe('a week of daily prompts', () => {
  it('sends exactly 7 prompts, each at 08:50 Toronto time, across the spring-forward weekend', async () => {
    // Thursday 5 March 2026, 07:00 EST. Clocks spring forward on Sunday 8 March.
    const start = new Date('2026-03-05T12:00:00Z');
    const harness = await createDeliveryHarness({
      start,
      store: await track(createSqliteStore({ filename: ':memory:' })),
    });
    await harness.schedule({ action: 'create', type: 'fixed', fixed_time: '09:00' });

    await harness.runner.advanceTo(new Date(start.getTime() + 7 * DAY));

    expect(await promptTimes(harness.store, 'America/Toronto')).toEqual([
      '2026-03-05 08:50 (America/Toronto, UTC-05:00)',
      '2026-03-06 08:50 (America/Toronto, UTC-05:00)',
      '2026-03-07 08:50 (America/Toronto, UTC-05:00)',
      '2026-03-08 08:50 (America/Toronto, UTC-04:00)',
      '2026-03-09 08:50 (America/Toronto, UTC-04:00)',
      '2026-03-10 08:50 (America/Toronto, UTC-04:00)',
      '2026-03-11 08:50 (America/Toronto, UTC-04:00)',
    ]);
    const texts = harness.messenger.textsFor('p_1');
    expect(texts.filter((text) => text === DONE_POLL.question)).toHaveLength(7);
    expect(texts).toHaveLength(14);
    expect(harness.generator.calls).toHaveLength(7);
    // The eighth occurrence waits, alone, for Thursday 12 March.
    const pending = await harness.store.jobs.listPending({ participantId: 'p_1' });
    expect(pending.map((job) => [job.kind, job.runAt.toISOString()])).toEqual([
      [DAILY_PROMPT_JOB, '2026-03-12T12:50:00.000Z'],
    ]);
  });

  it('keeps 08:50 local across the fall-back weekend too', async () => {
    const start = new Date('2026-10-30T11:00:00Z'); // Friday 07:00 EDT; clocks fall back on Sunday 1 November.
    const harness = await createDeliveryHarness({
      start,
      store: await track(createSqliteStore({ filename: ':memory:' })),
    });
    await harness.schedule({ action: 'create', type: 'fixed', fixed_time: '09:00' });
    await harness.runner.advanceTo(new Date(start.getTime() + 3 * DAY));
    const sent = await harness.store.events.list({ type: 'prompt-sent' });
    expect(sent.map((event) => event.createdAt.toISOString())).toEqual([
      '2026-10-30T12:50:00.000Z',
      '2026-10-31T12:50:00.000Z',
      '2026-11-01T13:50:00.000Z',
    ]);
  });

  it('draws a new minute inside the window for each day of a random schedule', async () => {
    const start = new Date('2026-03-02T06:00:00Z');
    const schedule: ScheduleInfo = {
      id: 'sched_1',
      type: 'random',
      random_start_time: '10:00',
      random_end_time: '12:00',
      timezone: 'UTC',
      created_at: start.toISOString(),
      timer_id: '',
    };
    const random = seededRandom(2026);
    const targets: string[] = [];
    let localDate: string | undefined;
    for (let day = 0; day < 7; day += 1) {
      const occurrence = planOccurrence(schedule, {
        after: start,
        prepTimeMinutes: 10,
        random,
        ...(localDate ? { fromLocalDate: localDate } : {}),
      });
      const time = occurrence.targetAt.toISOString().slice(11, 16);
      expect(time >= '10:00' && time <= '12:00').toBe(true);
      expect(occurrence.fireAt.getTime()).toBe(occurrence.targetAt.getTime() - minutes(10));
      expect(occurrence.localDate).toBe(addLocalDays('2026-03-02', day));
      targets.push(time);
      localDate = addLocalDays(occurrence.localDate, 1);
    }
    expect(new Set(targets).size).toBeGreaterThan(1);
  });
});

describe('restarts', () => {
  async function tempDatabase(): Promise<string> {
    const directory = await mkdtemp(join(tmpdir(), 'promptpipe-scheduling-'));
    directories.push(directory);
    return join(directory, 'promptpipe.db');
  }

  it('keeps the schedule across a restart: the prompt fires exactly once', async () => {
    const filename = await tempDatabase();
    const start = new Date('2026-03-02T12:00:00Z');
    const before = await createDeliveryHarness({ start, store: await createSqliteStore({ filename }) });
    await before.schedule({ action: 'create', type: 'fixed', fixed_time: '09:00' });
    await before.store.close();

    const reopened = await track(createSqliteStore({ filename }));
    const after = await createDeliveryHarness({ start, store: reopened, enroll: false, idPrefix: 'after_' });
    await after.runner.advanceTo(new Date('2026-03-02T16:00:00Z'));

    expect(after.messenger.textsFor('p_1')).toEqual(['After your coffee, take a 10-minute walk.', DONE_POLL.question]);
    expect(await reopened.events.list({ type: 'prompt-sent' })).toHaveLength(1);
    const pending = await reopened.jobs.listPending({ participantId: 'p_1' });
    expect(pending.map((job) => job.runAt.toISOString())).toEqual(['2026-03-03T13:50:00.000Z']);
  });

  it('takes back a prompt claimed by a process that crashed, and sends it exactly once', async () => {
    const filename = await tempDatabase();
    const start = new Date('2026-03-02T12:00:00Z');
    const before = await createDeliveryHarness({ start, store: await createSqliteStore({ filename }) });
    await before.schedule({ action: 'create', type: 'fixed', fixed_time: '09:00' });
    // The old process claimed the job at 08:50 and died before running it.
    const claimed = await before.store.jobs.claimDue({
      now: new Date('2026-03-02T13:50:00Z'),
      owner: 'crashed-process',
      leaseMs: minutes(10),
      limit: 10,
    });
    expect(claimed).toHaveLength(1);
    await before.store.close();

    const reopened = await track(createSqliteStore({ filename }));
    const after = await createDeliveryHarness({
      start: new Date('2026-03-02T13:52:00Z'),
      store: reopened,
      enroll: false,
      idPrefix: 'after_',
    });
    await after.runner.advanceTo(new Date('2026-03-02T16:00:00Z'));

    expect(after.messenger.textsFor('p_1')).toEqual(['After your coffee, take a 10-minute walk.', DONE_POLL.question]);
    const [event] = await reopened.events.list({ type: 'prompt-sent' });
    // Taken back as soon as the lease has expired (the first millisecond after 09:00): ten minutes late, well
    // inside the grace period.
    expect(event?.createdAt).toEqual(new Date('2026-03-02T14:00:00.001Z'));
    expect(await reopened.events.list({ type: 'prompt-sent' })).toHaveLength(1);
  });
});

describe('re-arming after a pause', () => {
  it('gives a resumed participant their schedule back, and does nothing when a job is pending', async () => {
    const start = new Date('2026-03-02T12:00:00Z');
    const harness = await createDeliveryHarness({
      start,
      store: await track(createSqliteStore({ filename: ':memory:' })),
    });
    const { store, clock } = harness;
    await harness.schedule({ action: 'create', type: 'fixed', fixed_time: '09:00' });
    const arming = {
      store,
      newId: (prefix: string) => `${prefix}_resumed`,
      random: Math.random,
      prepTimeMinutes: 10,
    };

    expect(
      await store.transaction(() => ensureDailyPromptJob(arming, { participantId: 'p_1', now: clock.now() })),
    ).toBeUndefined();

    await store.jobs.cancelForParticipant('p_1', clock.now());
    clock.set(new Date('2026-03-02T20:00:00Z'));
    const armed = await store.transaction(() =>
      ensureDailyPromptJob(arming, { participantId: 'p_1', now: clock.now() }),
    );

    expect(armed?.job).toMatchObject({ id: 'job_resumed', runAt: new Date('2026-03-03T13:50:00Z') });
    expect(armed?.schedule.timer_id).toBe('job_resumed');
  });
});
