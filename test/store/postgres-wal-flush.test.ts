/**
 * PostgreSQL group commit (src/store/postgres/wal-flush.ts): concurrent `durable()` calls share one WAL flush, a call
 * made while a flush runs waits for a flush that starts after it, a failed flush is reported to its callers; and,
 * against a real server (PROMPTPIPE_TEST_PG_URL), the flush statement runs in one round trip at
 * `synchronous_commit = on` on a session that is otherwise at `off`.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createWalFlush, GROUP_COMMIT_STARTUP_OPTION } from '../../src/store/postgres/wal-flush.ts';

const url = process.env['PROMPTPIPE_TEST_PG_URL'];

/** A pool whose flushes finish only when the test says so. */
function controlledPool() {
  const pending: { resolve: () => void; reject: (error: Error) => void }[] = [];
  return {
    pending,
    query: (() =>
      new Promise<void>((resolve, reject) => {
        pending.push({ resolve, reject });
      })) as unknown as pg.Pool['query'],
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('PostgreSQL group commit', () => {
  it('serves concurrent callers with one flush', async () => {
    const pool = controlledPool();
    const flush = createWalFlush(pool);
    let done = 0;
    const calls = [flush.durable(), flush.durable(), flush.durable()].map((call) => call.then(() => (done += 1)));
    await settle();
    // The first call started a flush; the other two arrived while it ran, so they need one that starts after them.
    expect(pool.pending).toHaveLength(1);
    pool.pending[0]?.resolve();
    await settle();
    expect(done).toBe(1);
    expect(pool.pending).toHaveLength(2);
    pool.pending[1]?.resolve();
    await Promise.all(calls);
    expect(done).toBe(3);
    // The two waiting callers shared the second flush.
    expect(pool.pending).toHaveLength(2);
  });

  it('rejects the callers of a failed flush, and flushes again on the next call', async () => {
    const pool = controlledPool();
    const flush = createWalFlush(pool);
    const failed = flush.durable();
    await settle();
    pool.pending[0]?.reject(new Error('connection lost'));
    await expect(failed).rejects.toThrow('connection lost');
    const next = flush.durable();
    await settle();
    expect(pool.pending).toHaveLength(2);
    pool.pending[1]?.resolve();
    await expect(next).resolves.toBeUndefined();
  });

  it.skipIf(!url)('flushes on a real server from a session at synchronous_commit = off', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1, options: GROUP_COMMIT_STARTUP_OPTION });
    try {
      const flush = createWalFlush(pool);
      await Promise.all([flush.durable(), flush.durable()]);
      // `set local` ended with the flush's transaction: the session is back at `off`.
      const setting = await pool.query<{ synchronous_commit: string }>('show synchronous_commit');
      expect(setting.rows[0]?.synchronous_commit).toBe('off');
    } finally {
      await pool.end();
    }
  });
});
