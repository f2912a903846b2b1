import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCompletionBatch } from '../../src/scheduling/completion-batch.ts';
import { JobStatus, type Store } from '../../src/store/store.ts';
import { createMemoryStore } from './scheduling-fixtures.ts';

const T0 = new Date('2026-03-02T14:00:00.000Z');

let real: Store;
/** `real`, counting the transactions begun on it. */
let store: Store;
let transactions = 0;

beforeEach(async () => {
  real = await createMemoryStore();
  transactions = 0;
  store = {
    ...real,
    transaction: (fn) => {
      transactions += 1;
      return real.transaction(fn);
    },
  };
});

afterEach(async () => {
  await real.close();
});

/** Enqueues and claims `count` jobs, as the runner would before running them. */
async function runningJobs(count: number): Promise<string[]> {
  for (let index = 1; index <= count; index += 1) {
    await real.jobs.enqueue(
      { id: `job_${index}`, kind: 'deliver', participantId: `p_${index}`, runAt: T0, payload: {} },
      T0,
    );
  }
  const claimed = await real.jobs.claimDue({ now: T0, owner: 'runner', leaseMs: 60_000, limit: count });
  return claimed.map((job) => job.id);
}

async function statusOf(id: string): Promise<string | undefined> {
  return (await real.jobs.get(id))?.status;
}

const receipt = (outboundId: string) => async () => {
  await store.deliveries.record({ outboundId, channel: 'webhook', status: 'sent', createdAt: T0 });
};

describe('job completions', () => {
  it('writes the completions of one turn of the event loop in one transaction, each with its writes', async () => {
    const ids = await runningJobs(3);
    const batch = createCompletionBatch(store);
    await Promise.all(ids.map((id, index) => batch.complete(id, T0, receipt(`out_${index}`))));
    expect(transactions).toBe(1);
    for (const id of ids) expect(await statusOf(id)).toBe(JobStatus.COMPLETED);
    for (const index of [0, 1, 2]) expect(await real.deliveries.listFor(`out_${index}`)).toHaveLength(1);
  });

  it('writes completions of later turns in transactions of their own', async () => {
    const [first, second] = await runningJobs(2);
    const batch = createCompletionBatch(store);
    await batch.complete(first ?? '', T0);
    await batch.complete(second ?? '', T0);
    expect(transactions).toBe(2);
    expect(await statusOf(second ?? '')).toBe(JobStatus.COMPLETED);
  });

  it('when one completion fails, keeps nothing of it and still completes the others', async () => {
    const ids = await runningJobs(3);
    const batch = createCompletionBatch(store);
    const failing = async () => {
      throw new Error('receipt refused');
    };
    const results = await Promise.allSettled([
      batch.complete(ids[0] ?? '', T0, receipt('out_0')),
      batch.complete(ids[1] ?? '', T0, failing),
      batch.complete(ids[2] ?? '', T0, receipt('out_2')),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await statusOf(ids[0] ?? '')).toBe(JobStatus.COMPLETED);
    expect(await statusOf(ids[1] ?? '')).toBe(JobStatus.RUNNING);
    expect(await statusOf(ids[2] ?? '')).toBe(JobStatus.COMPLETED);
    // The receipts of the shared attempt rolled back with it: each is stored once, by its own transaction.
    expect(await real.deliveries.listFor('out_0')).toHaveLength(1);
    expect(await real.deliveries.listFor('out_2')).toHaveLength(1);
  });
});
