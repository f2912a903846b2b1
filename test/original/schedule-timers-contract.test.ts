/**
 * `POST /schedule` and `GET /timers`, `GET/DELETE /timers/{id}` against the original PromptPipe's docs/api.md:
 * `201 {"status":"ok","message":"Scheduled successfully","result":"sched_…"}`; timers without the envelope
 * (`{timers, count}`, a `TimerInfo`, `{message, timerID, canceled}`). Schedules are durable jobs; time is the manual
 * clock, starting Monday 2 March 2026, 09:00 in Toronto.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type OriginalApp, startOriginalApp } from './original-app.ts';

let original: OriginalApp | undefined;

async function start(environment: Record<string, string> = {}): Promise<OriginalApp> {
  original = await startOriginalApp(environment);
  return original;
}
afterEach(async () => {
  await original?.close();
  original = undefined;
});

const EVENING = { hour: 18, minute: 0, timezone: 'America/Toronto' };

describe('POST /schedule and the timers (the original API)', () => {
  it('schedules a recurring prompt that first fires today at the local time, then every day', async () => {
    const app = await start();
    const answer = await app.call('POST', '/schedule', {
      to: '15551234567',
      body: 'Evening check-in',
      schedule: EVENING,
    });
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({
      status: 'ok',
      message: 'Scheduled successfully',
      result: expect.stringMatching(/^sched_/),
    });
    const timerId = answer.body['result'] as string;

    const timer = await app.call('GET', `/timers/${timerId}`);
    expect(timer.status).toBe(200);
    expect(timer.body).toMatchObject({
      id: timerId,
      type: 'recurring',
      schedule: EVENING,
      // 18:00 in Toronto (EST, UTC-5) today: the original would have waited until tomorrow.
      next_run: '2026-03-02T23:00:00.000Z',
      remaining: '9h0m0s',
      kind: 'original_schedule',
      participant_id: expect.stringMatching(/^conv_/),
    });
    const list = await app.call('GET', '/timers');
    expect(list.body).toMatchObject({ count: 1, timers: [expect.objectContaining({ id: timerId })] });

    await app.advanceTo('2026-03-03T00:00:00.000Z');
    const [sent] = await app.waitForDeliveries(1);
    expect(sent).toMatchObject({ to: '+15551234567', text: 'Evening check-in' });
    const next = await app.call('GET', `/timers/${timerId}`);
    expect(next.body).toMatchObject({ id: timerId, next_run: '2026-03-03T23:00:00.000Z' });

    await app.advanceTo('2026-03-04T00:00:00.000Z');
    expect(await app.waitForDeliveries(2)).toHaveLength(2);
  });

  it('cancels a schedule by its timer id (an event records it) and sends nothing more', async () => {
    const app = await start();
    const timerId = (await app.call('POST', '/schedule', { to: '15551234567', body: 'x', schedule: EVENING })).body[
      'result'
    ] as string;
    const cancelled = await app.call('DELETE', `/timers/${timerId}`);
    expect(cancelled).toEqual({
      status: 200,
      body: { message: 'Timer cancelled successfully', timerID: timerId, canceled: true },
    });
    const events = await app.app.store.events.list({ type: 'timer-cancelled' });
    expect(events).toEqual([expect.objectContaining({ data: expect.objectContaining({ timer_id: timerId }) })]);

    const gone = await app.call('GET', `/timers/${timerId}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ status: 'error', message: expect.stringContaining('Timer not found') });
    expect((await app.call('DELETE', `/timers/${timerId}`)).status).toBe(404);
    await app.advanceTo('2026-03-05T00:00:00.000Z');
    expect(app.delivered()).toEqual([]);
  });

  it('lists every pending job as a timer with its kind, owner and due time, and cancels any of them', async () => {
    const app = await start();
    const participant = await app.app.participants.enroll({ phoneNumber: '+15551230009' }, { greet: false });
    await app.app.store.transaction((tx) =>
      tx.jobs.enqueue(
        {
          id: 'job_reminder',
          kind: 'daily_prompt_reminder',
          participantId: participant.id,
          runAt: new Date('2026-03-02T19:00:00.000Z'),
          payload: {},
        },
        new Date('2026-03-02T14:00:00.000Z'),
      ),
    );
    const list = await app.call('GET', '/timers');
    expect(list.body['timers']).toEqual([
      expect.objectContaining({
        id: 'job_reminder',
        type: 'once',
        kind: 'daily_prompt_reminder',
        participant_id: participant.id,
        expires_at: '2026-03-02T19:00:00.000Z',
        due_at: '2026-03-02T19:00:00.000Z',
        remaining: '5h0m0s',
      }),
    ]);
    expect((await app.call('DELETE', '/timers/job_reminder')).status).toBe(200);
    expect((await app.app.store.jobs.get('job_reminder'))?.status).toBe('cancelled');
  });

  it('counts weekdays from Sunday = 0 and never fires the same minute it was made', async () => {
    const app = await start();
    const monday = { hour: 9, minute: 0, weekday: 1, timezone: 'America/Toronto' };
    const id = (await app.call('POST', '/schedule', { to: '15551234567', body: 'x', schedule: monday })).body['result'];
    const timer = await app.call('GET', `/timers/${id}`);
    expect(timer.body['next_run']).toBe('2026-03-09T13:00:00.000Z'); // next Monday 09:00, daylight saving time
  });

  it('uses DEFAULT_SCHEDULE (UTC) when the prompt has none, and refuses a prompt without either', async () => {
    const withDefault = await start({ DEFAULT_SCHEDULE: '30 8 * * *' });
    const answer = await withDefault.call('POST', '/schedule', { to: '15551234567', body: 'Morning' });
    expect(answer.status).toBe(201);
    const timer = await withDefault.call('GET', `/timers/${answer.body['result']}`);
    expect(timer.body).toMatchObject({ next_run: '2026-03-03T08:30:00.000Z', schedule: { minute: 30, hour: 8 } });
    await withDefault.close();

    const withoutDefault = await start();
    const refused = await withoutDefault.call('POST', '/schedule', { to: '15551234567', body: 'Morning' });
    expect(refused.status).toBe(400);
    expect(refused.body['message']).toContain('Missing required field: schedule');
  });

  it.each([
    ['a minute out of range', { minute: 99 }, /schedule\.minute must be an integer from 0 to 59/],
    ['a weekday out of range', { weekday: 7 }, /Sunday=0/],
    ['an unknown time zone', { hour: 9, timezone: 'Mars/Olympus' }, /IANA time zone/],
    ['a day that never comes', { month: 2, day: 31 }, /no day matches/],
  ])('refuses %s with 400 (the original answered 500) and schedules nothing', async (_case, schedule, message) => {
    const app = await start();
    const answer = await app.call('POST', '/schedule', { to: '15551234567', body: 'x', schedule });
    expect(answer.status).toBe(400);
    expect(answer.body['message']).toMatch(message);
    expect((await app.call('GET', '/timers')).body['count']).toBe(0);
  });

  it('refuses to schedule a genai prompt without a model, as the original did', async () => {
    const app = await start({ OPENAI_BASE_URL: '' });
    const answer = await app.call('POST', '/schedule', {
      to: '15551234567',
      type: 'genai',
      system_prompt: 's',
      user_prompt: 'u',
      schedule: EVENING,
    });
    expect(answer.status).toBe(400);
    expect(answer.body['message']).toContain('GenAI client not configured');
  });

  it('generates a scheduled genai prompt when it fires', async () => {
    const app = await start();
    await app.call('POST', '/schedule', {
      to: '15551234567',
      type: 'genai',
      system_prompt: 'Be brief.',
      user_prompt: 'An evening thought',
      schedule: EVENING,
    });
    expect(app.model.requests).toHaveLength(0);
    await app.advanceTo('2026-03-02T23:30:00.000Z');
    const [sent] = await app.waitForDeliveries(1);
    expect(sent).toMatchObject({ text: 'model answer to: An evening thought' });
  });
});
