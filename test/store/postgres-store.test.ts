import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { Store } from '../../src/store/store.ts';
import { urlWithSchema } from '../support/promptpipe-cluster.ts';
import { describeStoreContract } from './store-contract.ts';

const url = process.env['PROMPTPIPE_TEST_PG_URL'];
if (!url) console.warn('PostgreSQL tests skipped: PROMPTPIPE_TEST_PG_URL is not set');

/** Every schema this file created; all are dropped when it ends. */
const schemas: string[] = [];
const runId = randomBytes(4).toString('hex');

function freshSchema(): string {
  const schema = `promptpipe_test_${runId}_${schemas.length + 1}`;
  schemas.push(schema);
  return schema;
}

// A few schemas per statement (one commit each): one by one, ~90 drops can outlast the hook timeout on a loaded
// machine, and all in one statement runs out of lock slots. The generous timeout bounds clean-up; it asserts nothing.
afterAll(async () => {
  if (!url || schemas.length === 0) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let start = 0; start < schemas.length; start += 8) {
      const batch = schemas.slice(start, start + 8).map((schema) => `"${schema}"`);
      await client.query(`drop schema if exists ${batch.join(', ')} cascade`);
    }
  } finally {
    await client.end();
  }
}, 120_000);

describe.skipIf(!url)('postgres store', () => {
  const connectionString = url ?? '';

  describeStoreContract('postgres', () => createPostgresStore({ connectionString, schema: freshSchema() }));

  it('reports its dialect and keeps its tables in its own schema', async () => {
    const schema = freshSchema();
    const store = await createPostgresStore({ connectionString, schema });
    expect(store.dialect).toBe('postgres');
    await store.close();
    const client = new pg.Client({ connectionString });
    await client.connect();
    const { rows } = await client.query<{ table_name: string }>(
      'select table_name from information_schema.tables where table_schema = $1 order by table_name',
      [schema],
    );
    await client.end();
    expect(rows.map((row) => row.table_name)).toEqual(
      expect.arrayContaining(['events', 'flow_states', 'inbound_messages', 'jobs', 'participants', 'transcript']),
    );
  });

  it('migrates a schema chosen by the search path of the URL even when another schema has migration tables', async () => {
    // Another deployment (or test) already migrated its own schema in this database.
    const other = await createPostgresStore({ connectionString, schema: freshSchema() });
    await other.close();
    const schema = freshSchema();
    const client = new pg.Client({ connectionString });
    await client.connect();
    await client.query(`create schema "${schema}"`);
    await client.end();
    const store = await createPostgresStore({ connectionString: urlWithSchema(connectionString, schema) });
    await store.participants.count();
    await store.close();
  });

  it('rejects a schema name that is not a plain identifier', async () => {
    await expect(createPostgresStore({ connectionString, schema: 'bad"; drop' })).rejects.toMatchObject({
      code: 'invalid_input',
    });
  });

  describe('with two instances on one database', () => {
    async function openTwo(): Promise<[Store, Store]> {
      const schema = freshSchema();
      const first = await createPostgresStore({ connectionString, schema });
      // The second instance finds the schema migrated and must not fail on it.
      const second = await createPostgresStore({ connectionString, schema });
      return [first, second];
    }

    async function enqueueMany(store: Store, count: number): Promise<void> {
      const now = new Date('2025-03-01T08:00:00.000Z');
      for (let index = 0; index < count; index += 1) {
        await store.jobs.enqueue(
          { id: `job_${String(index).padStart(3, '0')}`, kind: 'reminder', runAt: now, payload: {} },
          now,
        );
      }
    }

    it('never lets both claim the same job', async () => {
      const [first, second] = await openTwo();
      try {
        const total = 60;
        await enqueueMany(first, total);
        const now = new Date('2025-03-01T09:00:00.000Z');
        const claimed: string[] = [];
        for (let round = 0; round < 10; round += 1) {
          const claims = await Promise.all([
            first.jobs.claimDue({ now, owner: 'instance_a', leaseMs: 60_000, limit: 4 }),
            second.jobs.claimDue({ now, owner: 'instance_b', leaseMs: 60_000, limit: 4 }),
            first.jobs.claimDue({ now, owner: 'instance_a', leaseMs: 60_000, limit: 4 }),
            second.jobs.claimDue({ now, owner: 'instance_b', leaseMs: 60_000, limit: 4 }),
          ]);
          claimed.push(...claims.flat().map((job) => job.id));
        }
        expect(claimed.length).toBeGreaterThan(0);
        expect(new Set(claimed).size).toBe(claimed.length);
        const leftovers = await first.jobs.claimDue({ now, owner: 'instance_a', leaseMs: 60_000, limit: total });
        expect(claimed.length + leftovers.length).toBe(total);
        expect(new Set([...claimed, ...leftovers.map((job) => job.id)]).size).toBe(total);
      } finally {
        await Promise.all([first.close(), second.close()]);
      }
    });

    it('skips, without waiting, the jobs another instance is claiming in an open transaction', async () => {
      const [first, second] = await openTwo();
      try {
        await enqueueMany(first, 5);
        const now = new Date('2025-03-01T09:00:00.000Z');
        let releaseFirst = (): void => undefined;
        const firstMayCommit = new Promise<void>((resolve) => {
          releaseFirst = resolve;
        });
        let firstClaimed: string[] = [];
        const firstHasClaimed = new Promise<void>((resolve) => {
          void first.transaction(async (tx) => {
            firstClaimed = (await tx.jobs.claimDue({ now, owner: 'instance_a', leaseMs: 60_000, limit: 2 })).map(
              (job) => job.id,
            );
            resolve();
            await firstMayCommit;
          });
        });
        await firstHasClaimed;
        expect(firstClaimed).toEqual(['job_000', 'job_001']);

        const timeout = new Promise<'blocked'>((resolve) => setTimeout(() => resolve('blocked'), 3000));
        const secondClaim = second.jobs.claimDue({ now, owner: 'instance_b', leaseMs: 60_000, limit: 10 });
        const outcome = await Promise.race([secondClaim, timeout]);
        releaseFirst();
        expect(outcome).not.toBe('blocked');
        const secondClaimed = (await secondClaim).map((job) => job.id);
        expect(secondClaimed).toEqual(['job_002', 'job_003', 'job_004']);
      } finally {
        await Promise.all([first.close(), second.close()]);
      }
    });
  });
});
