import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLog } from '../../src/domain/log.ts';
import { createManualClock, type ManualClock, systemClock } from '../../src/scheduling/clock.ts';
import { exponentialBackoff, type JobRunReport } from '../../src/scheduling/job-execution.ts';
import type { JobRunner } from '../../src/scheduling/job-runner.ts';
import { createJobRunner } from '../../src/scheduling/job-runner-service.ts';
import { createInProcessLock, type ParticipantLock } from '../../src/store/participant-lock.ts';
import type { Job, NewJob, Store } from '../../src/store/store.ts';
import { createMemoryStore, minutes } from './scheduling-fixtures.ts';

const T0 = new Date('2026-03-02T14:00:00.000Z');
const at = (milliseconds: number) => new Date(T0.getTime() + milliseconds);

let store: Store;
let clock: ManualClock;
let jobCounter = 0;

beforeEach(async () => {
  store = await createMemoryStore();
  clock = createManualClock(T0);
  jobCounter = 0;
});

afterEach(async () => {
  await store.close();
});

function newJob(overrides: Partial<NewJob> = {}): NewJob {
  jobCounter += 1;
  return { id: `job_${jobCounter}`, kind: 'test', participantId: 'p_1', runAt: T0, payload: {}, ...overrides };
}

function runnerWith(overrides: Partial<Parameters<typeof createJobRunner>[0]> = {}): JobRunner {
  return createJobRunner({
    store,
    clock,
    lock: createInProcessLock(),
    log: silentLog,
    owner: 'test-runner',
    ...overrides,
  });
}

describe('running jobs', () => {
  it('runs a due job, completes it and reports its lateness', async () => {
    const reports: { job: Job; report: JobRunReport }[] = [];
    const runner = runnerWith({ onJobRun: (job, report) => reports.push({ job, report }) });
    const seen: string[] = [];
    runner.register('test', async (job) => {
      seen.push(job.id);
    });
    await store.jobs.enqueue(newJob({ runAt: at(-minutes(2)) }), T0);
    await store.jobs.enqueue(newJob({ runAt: at(minutes(5)) }), T0);

    expect(await runner.runDue()).toBe(1);

    expect(seen).toEqual(['job_1']);
    expect((await store.jobs.get('job_1'))?.status).toBe('completed');
    expect((await store.jobs.get('job_2'))?.status).toBe('pending');
    expect(reports.map(({ job, report }) => [job.id, report])).toEqual([
      ['job_1', { lateMs: minutes(2), outcome: 'completed' }],
    ]);
  });

  it('fails a job of an unknown kind at once, with a clear error and a job-failed event', async () => {
    const runner = runnerWith();
    await store.jobs.enqueue(newJob({ kind: 'mystery' }), T0);

    await runner.runDue();

    const job = await store.jobs.get('job_1');
    expect(job?.status).toBe('failed');
    expect(job?.lastError).toContain('No handler is registered for job kind "mystery"');
    const events = await store.events.list({ type: 'job-failed' });
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toMatchObject({ job_id: 'job_1', kind: 'mystery' });
  });

  it("commits a handler's completion writes in the transaction that completes the job", async () => {
    const reports: JobRunReport[] = [];
    const runner = runnerWith({ onJobRun: (_job, report) => reports.push(report) });
    runner.register('test', async (job) => async () => {
      // Inside the completion's transaction the job is still running: the two writes land together.
      expect((await store.jobs.get(job.id))?.status).toBe('running');
      await store.events.record({ participantId: 'p_1', type: 'test-done', data: { job: job.id }, createdAt: T0 });
    });
    await store.jobs.enqueue(newJob(), T0);

    expect(await runner.runDue()).toBe(1);

    expect((await store.jobs.get('job_1'))?.status).toBe('completed');
    expect((await store.events.list({ type: 'test-done' })).map((event) => event.data)).toEqual([{ job: 'job_1' }]);
    expect(reports).toEqual([{ lateMs: 0, outcome: 'completed' }]);
  });

  it('keeps neither the completion writes nor the completion when they fail; the job runs again', async () => {
    const reports: JobRunReport[] = [];
    const runner = runnerWith({ onJobRun: (_job, report) => reports.push(report), leaseMs: minutes(1) });
    let runs = 0;
    runner.register('test', async () => {
      runs += 1;
      const run = runs;
      return async () => {
        await store.events.record({ participantId: 'p_1', type: 'test-done', data: { run }, createdAt: T0 });
        if (run === 1) throw new Error('the disk is full');
      };
    });
    await store.jobs.enqueue(newJob(), T0);

    await runner.runDue();
    expect(reports).toEqual([{ lateMs: 0, outcome: 'retrying' }]);
    expect((await store.jobs.get('job_1'))?.status).toBe('running');
    expect(await store.events.list({ type: 'test-done' })).toEqual([]);

    // The lease expires and the job runs again, this time completing with its writes.
    clock.advance(minutes(2));
    await runner.runDue();
    expect(runs).toBe(2);
    expect((await store.jobs.get('job_1'))?.status).toBe('completed');
    expect((await store.events.list({ type: 'test-done' })).map((event) => event.data)).toEqual([{ run: 2 }]);
  });

  it('refuses to register two handlers for one kind', () => {
    const runner = runnerWith();
    runner.register('test', async () => undefined);
    expect(() => runner.register('test', async () => undefined)).toThrow(/already registered/);
  });
});

describe('failures', () => {
  it('retries with exponential back-off, then fails for good keeping the error', async () => {
    const outcomes: string[] = [];
    const runner = runnerWith({ onJobRun: (_job, report) => outcomes.push(report.outcome) });
    const attemptsSeen: { attempts: number; at: string }[] = [];
    runner.register('test', async (job) => {
      attemptsSeen.push({ attempts: job.attempts, at: clock.now().toISOString() });
      throw new Error(`boom ${job.attempts}`);
    });
    await store.jobs.enqueue(newJob({ maxAttempts: 3 }), T0);

    await runner.runDue();
    const afterFirst = await store.jobs.get('job_1');
    expect(afterFirst?.status).toBe('pending');
    expect(afterFirst?.lastError).toBe('boom 1');
    expect(afterFirst?.runAt).toEqual(at(30_000));

    await runner.advanceTo(at(minutes(10)));

    expect(attemptsSeen).toEqual([
      { attempts: 1, at: T0.toISOString() },
      { attempts: 2, at: at(30_000).toISOString() },
      { attempts: 3, at: at(90_000).toISOString() },
    ]);
    expect(outcomes).toEqual(['retrying', 'retrying', 'failed']);
    const failed = await store.jobs.get('job_1');
    expect(failed?.status).toBe('failed');
    expect(failed?.lastError).toBe('boom 3');
    const events = await store.events.list({ participantId: 'p_1', type: 'job-failed' });
    expect(events.map((event) => event.data)).toEqual([
      { job_id: 'job_1', kind: 'test', attempts: 3, error: 'boom 3' },
    ]);
  });

  it('doubles the default back-off from 30 seconds', () => {
    expect([1, 2, 3, 4].map(exponentialBackoff)).toEqual([30_000, 60_000, 120_000, 240_000]);
  });

  it('uses an injected back-off', async () => {
    const runner = runnerWith({ backoff: (attempts) => attempts * 1000 });
    runner.register('test', async () => {
      throw new Error('nope');
    });
    await store.jobs.enqueue(newJob(), T0);
    await runner.runDue();
    expect((await store.jobs.get('job_1'))?.runAt).toEqual(at(1000));
  });
});

describe('leases', () => {
  it('takes back a job whose lease expired (a crashed runner) and runs it', async () => {
    await store.jobs.enqueue(newJob(), T0);
    const [abandoned] = await store.jobs.claimDue({ now: T0, owner: 'crashed', leaseMs: minutes(5), limit: 10 });
    expect(abandoned?.status).toBe('running');

    const seen: { owner: string | undefined; attempts: number }[] = [];
    const runner = runnerWith();
    runner.register('test', async (job) => {
      seen.push({ owner: job.leaseOwner, attempts: job.attempts });
    });

    expect(await runner.runDue()).toBe(0);
    await runner.advanceTo(at(minutes(6)));

    expect(seen).toEqual([{ owner: 'test-runner', attempts: 2 }]);
    expect((await store.jobs.get('job_1'))?.status).toBe('completed');
  });

  it('gives up on a job taken back after its last attempt instead of running it again', async () => {
    await store.jobs.enqueue(newJob({ maxAttempts: 1 }), T0);
    await store.jobs.claimDue({ now: T0, owner: 'crashed', leaseMs: 1000, limit: 10 });
    const handler = vi.fn(async () => undefined);
    const runner = runnerWith();
    runner.register('test', handler);

    await runner.advanceTo(at(5000));

    expect(handler).not.toHaveBeenCalled();
    const job = await store.jobs.get('job_1');
    expect(job?.status).toBe('failed');
    expect(job?.lastError).toMatch(/lease expired/);
  });
});

describe('participant lock', () => {
  it('serialises the jobs of one participant and runs lock:false kinds without the lock', async () => {
    const inner = createInProcessLock();
    const locked: string[] = [];
    const lock: ParticipantLock = {
      run(participantId, work) {
        locked.push(participantId);
        return inner.run(participantId, work);
      },
    };
    const runner = runnerWith({ lock });
    const timeline: string[] = [];
    let active = 0;
    let maxActive = 0;
    runner.register('test', async (job) => {
      active += 1;
      maxActive = Math.max(maxActive, active);
      timeline.push(`start ${job.id}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      timeline.push(`end ${job.id}`);
      active -= 1;
    });
    runner.register('unlocked', async () => undefined, { lock: false });
    await store.jobs.enqueue(newJob(), T0);
    await store.jobs.enqueue(newJob(), T0);
    await store.jobs.enqueue(newJob({ kind: 'unlocked' }), T0);

    expect(await runner.runDue()).toBe(3);

    expect(maxActive).toBe(1);
    expect(timeline).toEqual(['start job_1', 'end job_1', 'start job_2', 'end job_2']);
    expect(locked).toEqual(['p_1', 'p_1']);
  });
});

describe('advanceTo', () => {
  it('stops at each due time in order, including jobs enqueued by handlers during the advance', async () => {
    const runner = runnerWith();
    const runs: string[] = [];
    runner.register('test', async (job) => {
      runs.push(`${job.id}@${clock.now().toISOString()}`);
      if (job.id === 'job_1') {
        await store.jobs.enqueue(newJob({ id: 'job_follow_up', runAt: at(minutes(30)) }), clock.now());
        await store.jobs.enqueue(newJob({ id: 'job_now', runAt: clock.now() }), clock.now());
      }
    });
    await store.jobs.enqueue(newJob({ runAt: at(minutes(10)) }), T0);
    await store.jobs.enqueue(newJob({ runAt: at(minutes(60)) }), T0);
    await store.jobs.enqueue(newJob({ runAt: at(minutes(180)) }), T0);

    const ran = await runner.advanceTo(at(minutes(120)));

    expect(ran).toBe(4);
    expect(runs).toEqual([
      `job_1@${at(minutes(10)).toISOString()}`,
      `job_now@${at(minutes(10)).toISOString()}`,
      `job_follow_up@${at(minutes(30)).toISOString()}`,
      `job_2@${at(minutes(60)).toISOString()}`,
    ]);
    expect(clock.now()).toEqual(at(minutes(120)));
    expect((await store.jobs.get('job_3'))?.status).toBe('pending');
  });

  it('is refused on the system clock', async () => {
    const runner = createJobRunner({ store, clock: systemClock, lock: createInProcessLock(), log: silentLog });
    await expect(runner.advanceTo(new Date())).rejects.toMatchObject({ code: 'invalid_input' });
  });
});

describe('wake loop on the system clock', () => {
  it('wakes on notify, sleeps until the next due job, and stops gracefully', async () => {
    const recorded: string[] = [];
    const runner = createJobRunner({
      store,
      clock: systemClock,
      lock: createInProcessLock(),
      log: silentLog,
      // Called once the job's outcome is written.
      onJobRun: (job, report) => recorded.push(`${job.id} ${report.outcome}`),
    });
    const ran: string[] = [];
    let releaseSlowJob: () => void = () => undefined;
    const slowJobStarted = new Promise<void>((started) => {
      runner.register('slow', async (job) => {
        started();
        await new Promise<void>((release) => {
          releaseSlowJob = release;
        });
        ran.push(job.id);
      });
    });
    runner.register('test', async (job) => {
      ran.push(job.id);
    });
    runner.start();

    // Enqueued after start: only notify() tells the sleeping loop (its cap is a minute).
    await store.jobs.enqueue(newJob({ runAt: new Date() }), new Date());
    runner.notify();
    await vi.waitFor(() => expect(ran).toContain('job_1'), { timeout: 5000 });

    // Due shortly: the loop sleeps until then on its own.
    await store.jobs.enqueue(newJob({ runAt: new Date(Date.now() + 50) }), new Date());
    runner.notify();
    await vi.waitFor(() => expect(ran).toContain('job_2'), { timeout: 5000 });

    await store.jobs.enqueue(newJob({ kind: 'slow', runAt: new Date() }), new Date());
    runner.notify();
    await slowJobStarted;
    const stopping = runner.stop().then(() => recorded.push('stopped'));
    // Released on the next turn of the event loop: a stop that did not wait for the running job would have resolved
    // by then (it only wakes and ends the loop), so the order below tells the two apart.
    setImmediate(releaseSlowJob);
    await stopping;
    // The stop resolved only after the slow job's completion was recorded.
    expect(recorded).toEqual(['job_1 completed', 'job_2 completed', 'job_3 completed', 'stopped']);
    expect(ran).toEqual(['job_1', 'job_2', 'job_3']);
    expect((await store.jobs.get('job_3'))?.status).toBe('completed');
  });
});

describe('wake loop on the manual clock', () => {
  it('runs what is due now when notified, and leaves the future to advanceTo', async () => {
    let looks = 0;
    const nextDueAt = store.jobs.nextDueAt.bind(store.jobs);
    store.jobs.nextDueAt = () => {
      looks += 1;
      return nextDueAt();
    };
    const runner = runnerWith();
    const ran: string[] = [];
    runner.register('test', async (job) => {
      ran.push(`${job.id}@${clock.now().toISOString()}`);
    });
    runner.start();

    await store.jobs.enqueue(newJob({ runAt: T0 }), T0);
    await store.jobs.enqueue(newJob({ runAt: at(minutes(60)) }), T0);
    runner.notify();
    await vi.waitFor(() => expect(ran).toHaveLength(1), { timeout: 5000 });
    // Time stands still on the manual clock: once the run has looked at the next due time (an hour away) and gone
    // to sleep, nothing else has run, and nothing will until the clock is advanced.
    await vi.waitFor(() => expect(looks).toBeGreaterThan(0), { timeout: 5000 });
    expect(ran).toEqual([`job_1@${T0.toISOString()}`]);

    await runner.advanceTo(at(minutes(90)));
    await runner.stop();
    expect(ran).toEqual([`job_1@${T0.toISOString()}`, `job_2@${at(minutes(60)).toISOString()}`]);
  });
});

/** A handler that holds each job until released, recording starts and ends. */
function heldHandler(events: string[]) {
  const releases = new Map<string, () => void>();
  const handler = async (job: Job) => {
    events.push(`start ${job.id}`);
    await new Promise<void>((release) => releases.set(job.id, release));
    events.push(`end ${job.id}`);
  };
  const release = async (id: string) => {
    await vi.waitFor(() => expect(releases.has(id)).toBe(true), { timeout: 5000 });
    releases.get(id)?.();
  };
  return { handler, release };
}

describe('the wake loop after a run (manual clock: the loop only wakes when told)', () => {
  /**
   * Lets job_1 finish, then job_2, which only a run that finished can start (nobody notifies the loop again), and
   * checks they ran one after the other.
   */
  async function runBothInTurn(runner: JobRunner, held: ReturnType<typeof heldHandler>, events: string[]) {
    await held.release('job_1');
    await held.release('job_2');
    await vi.waitFor(() => expect(events).toContain('end job_2'), { timeout: 5000 });
    await runner.stop();
    expect(events).toEqual(['start job_1', 'end job_1', 'start job_2', 'end job_2']);
  }

  it("claims a participant's next ordered job as soon as the one before it finishes", async () => {
    const runner = runnerWith();
    const events: string[] = [];
    const held = heldHandler(events);
    runner.register('deliver', held.handler, { lock: false, ordered: true });
    runner.start();
    await store.jobs.enqueue(newJob({ kind: 'deliver' }), T0);
    await store.jobs.enqueue(newJob({ kind: 'deliver' }), T0);
    runner.notify();
    await runBothInTurn(runner, held, events);
  });

  it('claims again when a slot frees while every slot was taken', async () => {
    const runner = runnerWith({ batchSize: 1 });
    const events: string[] = [];
    const held = heldHandler(events);
    runner.register('test', held.handler, { lock: false });
    runner.start();
    await store.jobs.enqueue(newJob({ participantId: 'p_1' }), T0);
    await store.jobs.enqueue(newJob({ participantId: 'p_2' }), T0);
    runner.notify();
    await runBothInTurn(runner, held, events);
  });

  it('does not claim again after a run when nothing else is due', async () => {
    let claims = 0;
    const looks: Promise<Date | undefined>[] = [];
    const claimDue = store.jobs.claimDue.bind(store.jobs);
    const nextDueAt = store.jobs.nextDueAt.bind(store.jobs);
    store.jobs.claimDue = (options) => {
      claims += 1;
      return claimDue(options);
    };
    store.jobs.nextDueAt = () => {
      const look = nextDueAt();
      looks.push(look);
      return look;
    };
    const runner = runnerWith();
    const ran: string[] = [];
    runner.register('test', async (job) => {
      ran.push(job.id);
    });
    runner.start();
    await store.jobs.enqueue(newJob({ runAt: T0 }), T0);
    await store.jobs.enqueue(newJob({ runAt: at(minutes(60)) }), T0);
    runner.notify();
    await vi.waitFor(() => expect(ran).toEqual(['job_1']), { timeout: 5000 });
    // The claim at start (nothing yet) and the one on notify (job_1).
    expect(claims).toBe(2);
    // The finished run looked at the next due time (an hour away) and left the loop asleep.
    await vi.waitFor(() => expect(looks).toHaveLength(1), { timeout: 5000 });
    expect(await looks[0]).toEqual(at(minutes(60)));
    // A wake-up on that answer would claim within the promise callbacks it queues (the in-memory store answers
    // without a timer); they have all run before the next turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    expect(claims).toBe(2);
    await runner.stop();
  });
});

describe('hand-off (a job created already claimed by the runner)', () => {
  /** Counts the runner's claims. */
  function countClaims(): { count: number } {
    const counter = { count: 0 };
    const claimDue = store.jobs.claimDue.bind(store.jobs);
    store.jobs.claimDue = (options) => {
      counter.count += 1;
      return claimDue(options);
    };
    return counter;
  }

  it("offers its lease while started and fewer than five batches run, beside the claimed jobs' slots", async () => {
    const runner = runnerWith({ batchSize: 1, leaseMs: 30_000 });
    const events: string[] = [];
    const held = heldHandler(events);
    runner.register('test', held.handler, { lock: false });
    // Not held, so that a wrongly started job finishes and the stop below returns to report it.
    runner.register('quick', async (job) => {
      events.push(`start ${job.id}`);
    });
    expect(runner.handOffClaim()).toBeUndefined();

    runner.start();
    const claimFor = runner.handOffClaim();
    expect(claimFor).toEqual({ owner: 'test-runner', leaseMs: 30_000 });
    if (!claimFor) throw new Error('a started runner offers its lease');
    // A batch is one job here: five handed-off jobs use the whole allowance.
    for (const participantId of ['p_1', 'p_2', 'p_3', 'p_4', 'p_5']) {
      runner.runHandedOff(await store.jobs.enqueue(newJob({ participantId }), T0, { claimFor }));
    }
    await vi.waitFor(() => expect(events).toHaveLength(5), { timeout: 5000 });
    expect(runner.handOffClaim()).toBeUndefined();
    // They do not take the claimed jobs' slot: a queued job is still claimed and run.
    await store.jobs.enqueue(newJob({ participantId: 'p_6' }), T0);
    runner.notify();
    await vi.waitFor(() => expect(events).toContain('start job_6'), { timeout: 5000 });
    await held.release('job_1');
    await held.release('job_2');
    await vi.waitFor(() => expect(runner.handOffClaim()).toBeDefined(), { timeout: 5000 });
    for (const id of ['job_3', 'job_4', 'job_5', 'job_6']) await held.release(id);

    await runner.stop();
    expect(runner.handOffClaim()).toBeUndefined();
    // A job handed to a stopped runner is left to the next start (its lease is released then).
    runner.runHandedOff(await store.jobs.enqueue(newJob({ kind: 'quick', participantId: 'p_7' }), T0, { claimFor }));
    // stop() waits for every job the runner started: had it started job_7, its handler would have run.
    await runner.stop();
    expect(events).not.toContain('start job_7');
    expect((await store.jobs.get('job_7'))?.status).toBe('running');
  });

  it("runs a handed-off job without claiming it, then claims the participant's next one when it finishes", async () => {
    const claims = countClaims();
    const runner = runnerWith();
    const events: string[] = [];
    const held = heldHandler(events);
    runner.register('deliver', held.handler, { lock: false, ordered: true });
    runner.start();
    // The loop's first look at the queue, before anything is enqueued.
    await vi.waitFor(() => expect(claims.count).toBe(1), { timeout: 5000 });
    const claimFor = runner.handOffClaim();
    if (!claimFor) throw new Error('a started runner with free slots offers a claim');
    const first = await store.jobs.enqueue(newJob({ kind: 'deliver' }), T0, { claimFor });
    const second = await store.jobs.enqueue(newJob({ kind: 'deliver' }), T0, { claimFor });
    expect([first.status, second.status]).toEqual(['running', 'pending']);

    runner.runHandedOff(first);
    await held.release('job_1');
    await vi.waitFor(async () => expect((await store.jobs.get('job_1'))?.status).toBe('completed'), { timeout: 5000 });
    // job_2 waited for job_1; the finished run woke the loop, whose claim took it (nobody notified it).
    await held.release('job_2');
    await vi.waitFor(() => expect(events).toContain('end job_2'), { timeout: 5000 });
    await runner.stop();
    expect(events).toEqual(['start job_1', 'end job_1', 'start job_2', 'end job_2']);
    expect(claims.count).toBe(2);
    expect((await store.jobs.get('job_2'))?.status).toBe('completed');
  });

  it('ignores a job that is not running under its own lease', async () => {
    const runner = runnerWith();
    const ran: string[] = [];
    runner.register('test', async (job) => {
      ran.push(job.id);
    });
    runner.start();
    const queued = await store.jobs.enqueue(newJob(), T0);
    const elsewhere = await store.jobs.enqueue(newJob({ participantId: 'p_2' }), T0, {
      claimFor: { owner: 'other-runner', leaseMs: 60_000 },
    });
    runner.runHandedOff(queued);
    runner.runHandedOff(elsewhere);
    // stop() resolves once every job the runner started has finished: nothing ran if nothing was started.
    await runner.stop();
    expect(ran).toEqual([]);
  });
});

describe('lease heartbeat', () => {
  it('renews the lease of a job still running, so no other runner takes it over while its owner is alive', async () => {
    // A 3 s lease: the started runner renews it every second.
    const runner = runnerWith({ leaseMs: 3_000 });
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => {
      release = resolve;
    });
    let runs = 0;
    runner.register('test', async () => {
      runs += 1;
      await blocked;
    });
    await store.jobs.enqueue(newJob(), T0);
    runner.start();
    try {
      runner.notify();
      await vi.waitFor(async () => expect((await store.jobs.get('job_1'))?.status).toBe('running'), {
        timeout: 5_000,
      });
      // Far past the original lease: only a renewal keeps the job from being claimable.
      clock.advance(minutes(10));
      await vi.waitFor(
        async () =>
          expect((await store.jobs.get('job_1'))?.leaseUntil?.getTime()).toBeGreaterThan(clock.now().getTime()),
        { timeout: 5_000, interval: 100 },
      );
      expect(await store.jobs.claimDue({ now: clock.now(), owner: 'another', leaseMs: 3_000, limit: 10 })).toEqual([]);
    } finally {
      release();
      await runner.stop();
    }
    expect(runs).toBe(1);
    expect((await store.jobs.get('job_1'))?.status).toBe('completed');
  });
});
