import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/scheduling/clock.ts';
import { type ApiHarness, createApiHarness, START } from '../support/api-harness.ts';

const HOUR = 3_600_000;
let harness: ApiHarness;
afterEach(async () => {
  await harness.close();
});

/** Registers a job kind that records the (manual) time at which each job ran. */
function recordRuns(): string[] {
  const ranAt: string[] = [];
  harness.runner.register('test_tick', async (job) => {
    ranAt.push(`${job.id}@${harness.clock.now().toISOString()}`);
  });
  return ranAt;
}

async function enqueueTick(id: string, offsetMs: number): Promise<void> {
  await harness.store.jobs.enqueue(
    { id, kind: 'test_tick', runAt: new Date(START.getTime() + offsetMs), payload: {} },
    harness.clock.now(),
  );
}

describe('POST /admin/clock', () => {
  it('advances the manual clock, running each due job at its own time, and returns the new time', async () => {
    harness = await createApiHarness();
    const ranAt = recordRuns();
    await enqueueTick('job_a', HOUR);
    await enqueueTick('job_b', 3 * HOUR);
    const first = await harness.call('POST', '/admin/clock', { advance_ms: 2 * HOUR });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ status: 'ok', result: { now: '2026-03-02T16:00:00.000Z', jobs_run: 1 } });
    expect(ranAt).toEqual(['job_a@2026-03-02T15:00:00.000Z']);

    const second = await harness.call('POST', '/admin/clock', { set_to: '2026-03-02T18:30:00Z' });
    expect(second.json().result).toEqual({ now: '2026-03-02T18:30:00.000Z', jobs_run: 1 });
    expect(ranAt).toEqual(['job_a@2026-03-02T15:00:00.000Z', 'job_b@2026-03-02T17:00:00.000Z']);

    const read = await harness.call('GET', '/admin/clock');
    expect(read.json().result).toEqual({ now: '2026-03-02T18:30:00.000Z', mode: 'manual' });
  });

  it('delivers outbox messages that became due', async () => {
    harness = await createApiHarness();
    const ada = await harness.enroll();
    const delivered: string[] = [];
    harness.runner.register(
      'deliver_message',
      async (job) => {
        delivered.push((job.payload['message'] as { text: string }).text);
      },
      { lock: false },
    );
    await harness.participants.sendOrganiserMessage(ada.id, 'hello');
    expect((await harness.call('POST', '/admin/clock', { advance_ms: 0 })).json().result.jobs_run).toBe(1);
    expect(delivered).toEqual(['hello']);
  });

  it.each([
    ['neither field', {}, 'send exactly one of advance_ms or set_to'],
    ['both fields', { advance_ms: 1, set_to: '2026-03-03T00:00:00Z' }, 'send exactly one of advance_ms or set_to'],
    ['a negative advance', { advance_ms: -5 }, 'advance_ms'],
    ['a fractional advance', { advance_ms: 1.5 }, 'advance_ms'],
    ['a time that is not ISO', { set_to: 'tomorrow' }, 'set_to'],
    ['a time in the past', { set_to: '2026-03-01T00:00:00Z' }, 'the clock only moves forward'],
  ])('answers 400 for %s', async (_case, body, expected) => {
    harness = await createApiHarness();
    const response = await harness.call('POST', '/admin/clock', body);
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toContain(expected);
  });

  it('answers 409 when the clock is not manual', async () => {
    harness = await createApiHarness({ clock: systemClock });
    const response = await harness.call('POST', '/admin/clock', { advance_ms: 1000 });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({
      status: 'error',
      message: 'the clock is not manual: start the server with PROMPTPIPE_CLOCK=manual',
    });
    expect((await harness.call('GET', '/admin/clock')).json().result.mode).toBe('system');
  });
});
