/**
 * The job lease with its defaults: 30 s, renewed every 10 s by the heartbeat, so a dead runner's jobs are taken over
 * within about 30 s while a live runner's long job (a 60 s model call) is never taken over. And jobs a store knows to
 * be abandoned (PostgreSQL: their instance's liveness lock is gone) released at once. Only the heartbeat's
 * setInterval is faked: the manual clock stands for study time, the store runs on real timers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { silentLog } from '../../src/domain/log.ts';
import { createManualClock, type ManualClock } from '../../src/scheduling/clock.ts';
import { DEFAULT_LEASE_MS, type JobRunnerOptions } from '../../src/scheduling/job-runner-options.ts';
import { createJobRunner } from '../../src/scheduling/job-runner-service.ts';
import { leaseRenewalIntervalMs } from '../../src/scheduling/lease-heartbeat.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import type { Store } from '../../src/store/store.ts';
import { createMemoryStore } from './scheduling-fixtures.ts';

const T0 = new Date('2026-03-02T14:00:00.000Z');
const seconds = (count: number) => count * 1_000;

let store: Store;
let clock: ManualClock;

beforeEach(async () => {
  store = await createMemoryStore();
  clock = createManualClock(T0);
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
});

afterEach(async () => {
  vi.useRealTimers();
  await store.close();
});

function runnerWith(overrides: Partial<JobRunnerOptions> = {}) {
  return createJobRunner({ store, clock, lock: createInProcessLock(), log: silentLog, owner: 'live', ...overrides });
}

/** A handler that stands for a slow model call: it runs until released. */
function slowHandler() {
  let release: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    release = resolve;
  });
  let runs = 0;
  return {
    handler: async () => {
      runs += 1;
      await finished;
    },
    release: () => release(),
    runs: () => runs,
  };
}

describe('the default job lease', () => {
  it('is 30 s, renewed every 10 s, in the runner and in the configuration', () => {
    expect(DEFAULT_LEASE_MS).toBe(seconds(30));
    expect(leaseRenewalIntervalMs(DEFAULT_LEASE_MS)).toBe(seconds(10));
    // A longer lease still beats every 10 s: a dead instance's jobs are looked for that often.
    expect(leaseRenewalIntervalMs(seconds(600))).toBe(seconds(10));
    expect(leaseRenewalIntervalMs(seconds(3))).toBe(seconds(1));
    expect(loadConfig({}).cluster.jobLeaseMs).toBe(DEFAULT_LEASE_MS);
  });

  it('claims a job for 30 s when no lease is configured', async () => {
    await store.jobs.enqueue({ id: 'job_1', kind: 'test', runAt: T0, payload: {} }, T0);
    const runner = runnerWith();
    const leases: (Date | undefined)[] = [];
    runner.register('test', async (job) => {
      leases.push(job.leaseUntil);
    });
    expect(await runner.runDue()).toBe(1);
    expect(leases).toEqual([new Date(T0.getTime() + seconds(30))]);
  });

  it('keeps a job running for 60 s (a slow model call) under its live owner: never claimable by another', async () => {
    const slow = slowHandler();
    const runner = runnerWith();
    runner.register('test', slow.handler);
    await store.jobs.enqueue({ id: 'job_1', kind: 'test', runAt: T0, payload: {} }, T0);
    runner.start();
    try {
      runner.notify();
      await vi.waitFor(async () => expect((await store.jobs.get('job_1'))?.status).toBe('running'));
      // Six heartbeats, 10 s of study time each: at every step the lease reaches 30 s past now.
      for (let step = 1; step <= 6; step += 1) {
        clock.advance(seconds(10));
        await vi.advanceTimersByTimeAsync(seconds(10));
        const renewedUntil = T0.getTime() + seconds(10 * step + 30);
        await vi.waitFor(async () => expect((await store.jobs.get('job_1'))?.leaseUntil?.getTime()).toBe(renewedUntil));
        expect(
          await store.jobs.claimDue({ now: clock.now(), owner: 'other', leaseMs: seconds(30), limit: 10 }),
        ).toEqual([]);
      }
    } finally {
      slow.release();
      await runner.stop();
    }
    expect(slow.runs()).toBe(1);
    expect(await store.jobs.get('job_1')).toMatchObject({ status: 'completed', attempts: 1, leaseOwner: 'live' });
  });

  it('renews the lease of a job run by runDue without a started loop (a CLI command)', async () => {
    const slow = slowHandler();
    const runner = runnerWith();
    runner.register('test', slow.handler);
    await store.jobs.enqueue({ id: 'job_1', kind: 'test', runAt: T0, payload: {} }, T0);
    const ran = runner.runDue();
    await vi.waitFor(async () => expect((await store.jobs.get('job_1'))?.status).toBe('running'));
    clock.advance(seconds(10));
    await vi.advanceTimersByTimeAsync(seconds(10));
    await vi.waitFor(async () =>
      expect((await store.jobs.get('job_1'))?.leaseUntil).toEqual(new Date(T0.getTime() + seconds(40))),
    );
    slow.release();
    expect(await ran).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    // Nothing in flight: the next beat stops the heartbeat.
    await vi.advanceTimersByTimeAsync(seconds(10));
    expect(vi.getTimerCount()).toBe(0);
  });

  it('goes on renewing the lease of a job that a stop() waits for', async () => {
    const slow = slowHandler();
    const runner = runnerWith();
    runner.register('test', slow.handler);
    await store.jobs.enqueue({ id: 'job_1', kind: 'test', runAt: T0, payload: {} }, T0);
    runner.start();
    runner.notify();
    await vi.waitFor(async () => expect((await store.jobs.get('job_1'))?.status).toBe('running'));
    const stopped = runner.stop();
    clock.advance(seconds(10));
    await vi.advanceTimersByTimeAsync(seconds(10));
    await vi.waitFor(async () =>
      expect((await store.jobs.get('job_1'))?.leaseUntil).toEqual(new Date(T0.getTime() + seconds(40))),
    );
    slow.release();
    await stopped;
    expect(await store.jobs.get('job_1')).toMatchObject({ status: 'completed', attempts: 1 });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("lets another runner take a dead runner's job once its 30 s lease has run out, not before", async () => {
    await store.jobs.enqueue({ id: 'job_1', kind: 'test', runAt: T0, payload: {} }, T0);
    // Claimed by a runner that then dies: nobody renews the lease.
    await store.jobs.claimDue({ now: T0, owner: 'dead', leaseMs: DEFAULT_LEASE_MS, limit: 10 });
    const runner = runnerWith();
    const owners: (string | undefined)[] = [];
    runner.register('test', async (job) => {
      owners.push(job.leaseOwner);
    });
    clock.set(new Date(T0.getTime() + seconds(30)));
    expect(await runner.runDue()).toBe(0);
    clock.set(new Date(T0.getTime() + seconds(30) + 1));
    expect(await runner.runDue()).toBe(1);
    expect(owners).toEqual(['live']);
  });
});

describe('jobs of a dead owner', () => {
  /** Stands for the PostgreSQL coordinator: releases the running jobs of the owners it is told are dead. */
  function releaserOf(deadOwners: Set<string>) {
    const calls: Date[] = [];
    const release = async (now: Date): Promise<number> => {
      calls.push(now);
      let released = 0;
      for (const job of await store.jobs.listPending()) {
        if (job.status !== 'running' || !deadOwners.has(job.leaseOwner ?? '')) continue;
        await store.jobs.fail(job.id, 'released', now, job.runAt);
        released += 1;
      }
      return released;
    };
    return { release, calls };
  }

  it('are released at start and run at once, long before their lease would run out', async () => {
    await store.jobs.enqueue({ id: 'job_1', kind: 'test', runAt: T0, payload: {} }, T0);
    await store.jobs.claimDue({ now: T0, owner: 'dead', leaseMs: DEFAULT_LEASE_MS, limit: 10 });
    const releaser = releaserOf(new Set(['dead']));
    const runner = runnerWith({ releaseAbandonedJobs: releaser.release });
    const ran: string[] = [];
    runner.register('test', async (job) => {
      ran.push(`${job.id} by ${job.leaseOwner}`);
    });
    runner.start();
    try {
      await vi.waitFor(() => expect(ran).toEqual(['job_1 by live']));
    } finally {
      await runner.stop();
    }
    expect(releaser.calls).toEqual([T0]);
  });

  it('are looked for on every heartbeat; a live owner keeps its job', async () => {
    const releaser = releaserOf(new Set(['dead']));
    const runner = runnerWith({ releaseAbandonedJobs: releaser.release });
    const ran: string[] = [];
    runner.register('test', async (job) => {
      ran.push(job.id);
    });
    runner.start();
    try {
      await vi.waitFor(() => expect(releaser.calls).toHaveLength(1));
      await store.jobs.enqueue({ id: 'job_dead', kind: 'test', runAt: T0, payload: {} }, T0);
      await store.jobs.claimDue({ now: T0, owner: 'dead', leaseMs: DEFAULT_LEASE_MS, limit: 10 });
      await store.jobs.enqueue({ id: 'job_alive', kind: 'test', runAt: T0, payload: {} }, T0);
      await store.jobs.claimDue({ now: T0, owner: 'alive', leaseMs: DEFAULT_LEASE_MS, limit: 10 });
      await vi.advanceTimersByTimeAsync(leaseRenewalIntervalMs(DEFAULT_LEASE_MS));
      await vi.waitFor(() => expect(ran).toEqual(['job_dead']));
    } finally {
      await runner.stop();
    }
    expect(releaser.calls).toHaveLength(2);
    expect(await store.jobs.get('job_alive')).toMatchObject({ status: 'running', leaseOwner: 'alive' });
  });
});
