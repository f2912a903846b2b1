/**
 * The PostgreSQL cluster coordinator: two coordinators on one schema stand for two instances.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { type ClusterCoordinator, createClusterCoordinator } from '../../src/store/postgres/postgres-coordinator.ts';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { Store } from '../../src/store/store.ts';
import { urlWithSchema } from '../support/promptpipe-cluster.ts';

const url = process.env['PROMPTPIPE_TEST_PG_URL'];
if (!url) console.warn('PostgreSQL coordinator tests skipped: PROMPTPIPE_TEST_PG_URL is not set');

const schemas: string[] = [];
const opened: ClusterCoordinator[] = [];
const stores: Store[] = [];
const T0 = new Date('2026-03-02T14:00:00.000Z');

async function setUp(): Promise<{ connectionString: string; store: Store }> {
  const schema = `promptpipe_coord_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  const store = await createPostgresStore({ connectionString: url ?? '', schema });
  stores.push(store);
  return { connectionString: urlWithSchema(url ?? '', schema), store };
}

/** A promise and the function that resolves it. */
function gate(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

async function coordinator(connectionString: string, instanceId: string): Promise<ClusterCoordinator> {
  const created = await createClusterCoordinator({ connectionString, instanceId, onLost: () => undefined });
  opened.push(created);
  return created;
}

afterEach(async () => {
  for (const each of opened.splice(0)) await each.close();
  for (const store of stores.splice(0)) await store.close();
});

afterAll(async () => {
  if (!url || schemas.length === 0) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
});

describe.skipIf(!url)('postgres cluster coordinator', () => {
  it('never lets two instances hold one participant at once, and serves other participants meanwhile', async () => {
    const { connectionString } = await setUp();
    const first = await coordinator(connectionString, 'one');
    const second = await coordinator(connectionString, 'two');
    const events: string[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const firstRun = first.lock.run('p_1', async () => {
      events.push('first:start');
      await held;
      events.push('first:end');
    });
    await vi.waitFor(() => expect(events).toEqual(['first:start']));
    const secondRun = second.lock.run('p_1', async () => {
      events.push('second:run');
    });
    // Another participant is not blocked.
    expect(await second.lock.run('p_2', async () => 'other participant')).toBe('other participant');
    expect(await second.lock.tryRun?.('p_1', async () => 'must not run')).toEqual({ acquired: false });
    expect(events).toEqual(['first:start']);
    release();
    await Promise.all([firstRun, secondRun]);
    expect(events).toEqual(['first:start', 'first:end', 'second:run']);
  });

  it('hands a participant to the next holder queued in the same instance without unlocking, still excluding others', async () => {
    const { connectionString } = await setUp();
    const first = await coordinator(connectionString, 'one');
    const second = await coordinator(connectionString, 'two');
    const sent: string[] = [];
    const original = pg.Client.prototype.query as (...parameters: unknown[]) => unknown;
    const spy = vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (
      this: pg.Client,
      ...parameters: unknown[]
    ) {
      if (typeof parameters[0] === 'string') sent.push(parameters[0]);
      return original.apply(this, parameters);
    } as never);
    try {
      const gates = [gate(), gate()];
      const events: string[] = [];
      const runs = gates.map((gate, index) =>
        first.lock.run('p_1', async () => {
          events.push(`start:${index}`);
          await gate.promise;
        }),
      );
      await vi.waitFor(() => expect(events).toEqual(['start:0']));
      gates[0]?.resolve();
      await vi.waitFor(() => expect(events).toEqual(['start:0', 'start:1']));
      // Between the two holders the lock was never given up: the other instance cannot take it.
      expect(await second.lock.tryRun?.('p_1', async () => 'must not run')).toEqual({ acquired: false });
      gates[1]?.resolve();
      await Promise.all(runs);
      // One try-lock by `first` (the queued holder took the lock over), one failed try by `second`; one unlock.
      expect(sent.filter((text) => text.includes('pg_try_advisory_lock'))).toHaveLength(2);
      await vi.waitFor(() => expect(sent.filter((text) => text.includes('pg_advisory_unlock'))).toHaveLength(1));
      // Released after the last holder: the other instance takes it.
      await vi.waitFor(async () => {
        expect(await second.lock.tryRun?.('p_1', async () => 'ran')).toEqual({ acquired: true, value: 'ran' });
      });
    } finally {
      spy.mockRestore();
    }
  });

  it('releases the locks of an instance whose connection ends (a killed process)', async () => {
    const { connectionString } = await setUp();
    const dying = await coordinator(connectionString, 'dying');
    const survivor = await coordinator(connectionString, 'survivor');
    let started = false;
    void dying.lock.run('p_1', async () => {
      started = true;
      await new Promise(() => undefined); // never finishes: the process "dies" holding the lock
    });
    await vi.waitFor(() => expect(started).toBe(true));
    expect(await survivor.lock.tryRun?.('p_1', async () => 'taken')).toEqual({ acquired: false });
    await dying.close();
    expect(await survivor.lock.run('p_1', async () => 'taken over')).toBe('taken over');
  });

  it('is re-entrant only when asked', async () => {
    const { connectionString } = await setUp();
    const one = await coordinator(connectionString, 'one');
    const nested = await one.lock.run('p_1', () => one.lock.run('p_1', async () => 'inner'), { reentrant: true });
    expect(nested).toBe('inner');
  });

  it('wakes the other instances: job enqueued, clock moved', async () => {
    const { connectionString, store } = await setUp();
    const one = await coordinator(connectionString, 'one');
    const two = await coordinator(connectionString, 'two');
    const heard: string[] = [];
    two.onNotification('jobs', () => heard.push('jobs'));
    two.onNotification('clock', () => heard.push('clock'));
    await store.jobs.enqueue({ id: 'job_1', kind: 'test', runAt: T0, payload: {} }, T0);
    await vi.waitFor(() => expect(heard).toContain('jobs'));
    expect(await one.initClock(T0)).toEqual(T0);
    // A second instance adopts the stored time, whatever its own start.
    expect(await two.initClock(new Date('2030-01-01T00:00:00Z'))).toEqual(T0);
    const later = new Date(T0.getTime() + 3_600_000);
    expect(await one.advanceClock(later)).toEqual(later);
    await vi.waitFor(() => expect(heard).toContain('clock'));
    expect(await two.readClock()).toEqual(later);
    // Never backwards.
    expect(await two.advanceClock(T0)).toEqual(later);
  });

  it('counts due work as unfinished while a live instance runs it, not when its instance is gone', async () => {
    const { connectionString, store } = await setUp();
    const live = await coordinator(connectionString, 'live');
    const dead = await coordinator(connectionString, 'dead');
    await store.jobs.enqueue({ id: 'job_live', kind: 'test', runAt: T0, payload: {} }, T0);
    await store.jobs.enqueue({ id: 'job_dead', kind: 'test', runAt: T0, payload: {} }, T0);
    await store.jobs.enqueue({ id: 'job_pending', kind: 'test', runAt: T0, payload: {} }, T0);
    expect(await live.countUnfinishedDue(T0)).toEqual({ pending: 3, running: 0 });
    await store.jobs.claimDue({ now: T0, owner: live.owner, leaseMs: 60_000, limit: 1 });
    await store.jobs.claimDue({ now: T0, owner: dead.owner, leaseMs: 60_000, limit: 1 });
    expect(await live.countUnfinishedDue(T0)).toEqual({ pending: 1, running: 2 });
    await dead.close();
    expect(await live.countUnfinishedDue(T0)).toEqual({ pending: 1, running: 1 });
    await store.jobs.complete('job_live', T0);
    expect(await live.countUnfinishedDue(T0)).toEqual({ pending: 1, running: 0 });
    // The next change: just past the dead instance's lease (the pending job is already due).
    expect(await live.nextClaimableAfter(T0)).toEqual(new Date(T0.getTime() + 60_001));
  });

  it("puts a dead instance's running jobs back to pending at once; a live one's stay its own", async () => {
    const { connectionString, store } = await setUp();
    const live = await coordinator(connectionString, 'live');
    const dead = await coordinator(connectionString, 'dead');
    const delivery = (id: string) => ({ id, kind: 'deliver', participantId: 'p_1', runAt: T0, payload: {} });
    await store.jobs.enqueue({ id: 'job_live', kind: 'test', runAt: T0, payload: {} }, T0);
    await store.jobs.claimDue({ now: T0, owner: live.owner, leaseMs: 30_000, limit: 1 });
    await store.jobs.enqueue(delivery('reply_1'), T0);
    await store.jobs.enqueue(delivery('reply_2'), T0);
    const ordered = { orderedKinds: ['deliver'], limit: 10, leaseMs: 30_000 };
    expect((await store.jobs.claimDue({ ...ordered, now: T0, owner: dead.owner })).map((job) => job.id)).toEqual([
      'reply_1',
    ]);
    // While its instance lives, nothing is released.
    expect(await live.releaseAbandonedJobs(T0)).toBe(0);
    await dead.close();

    const later = new Date(T0.getTime() + 1_000);
    expect(await live.releaseAbandonedJobs(later)).toBe(1);
    const released = await store.jobs.get('reply_1');
    expect(released).toMatchObject({ status: 'pending', attempts: 1, runAt: T0 });
    expect([released?.leaseOwner, released?.leaseUntil]).toEqual([undefined, undefined]);
    expect(await store.jobs.get('job_live')).toMatchObject({ status: 'running', leaseOwner: live.owner });
    // Claimable now, long before the dead lease would have run out; the participant's next delivery waits behind it.
    const taken = await store.jobs.claimDue({ ...ordered, now: later, owner: live.owner });
    expect(taken.map((job) => [job.id, job.attempts])).toEqual([['reply_1', 2]]);
    await store.jobs.complete('reply_1', later);
    expect((await store.jobs.claimDue({ ...ordered, now: later, owner: live.owner })).map((job) => job.id)).toEqual([
      'reply_2',
    ]);
    expect(await live.releaseAbandonedJobs(later)).toBe(0);
  });
});
