/**
 * A `ConnectionLease` on a PostgreSQL session-level advisory lock, held on a dedicated connection (not the pool:
 * a pooled connection returns to the pool and the lock would go with it to whoever borrows it next). The lock is
 * released when the connection ends, so a crashed instance frees it at once and another one takes over.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { ConnectionLease } from './connection-lease.ts';

/** The lock's 64-bit key, derived from a name (so different sessions, or databases shared by studies, differ). */
export function advisoryLockKey(name: string): string {
  return createHash('sha256').update(name).digest().readBigInt64BE(0).toString();
}

export function createPostgresConnectionLease(options: {
  connectionString: string;
  /** e.g. `promptpipe:whatsapp-web:<session>`; include the schema when several studies share a database. */
  name: string;
  onError?: (error: Error) => void;
}): ConnectionLease {
  const key = advisoryLockKey(options.name);
  let client: pg.Client | undefined;
  let held = false;

  async function dropClient(): Promise<void> {
    const current = client;
    client = undefined;
    held = false;
    if (current) await current.end().catch(() => undefined);
  }

  return {
    async tryAcquire(onLost) {
      if (held) return true;
      if (!client) {
        const fresh = new pg.Client({ connectionString: options.connectionString });
        fresh.on('error', (error) => {
          options.onError?.(error);
          const wasHeld = held;
          void dropClient();
          if (wasHeld) onLost();
        });
        await fresh.connect();
        client = fresh;
      }
      const result = await client.query<{ acquired: boolean }>('select pg_try_advisory_lock($1::bigint) as acquired', [
        key,
      ]);
      held = result.rows[0]?.acquired === true;
      return held;
    },
    async release() {
      if (!client || !held) return;
      held = false;
      await client.query('select pg_advisory_unlock($1::bigint)', [key]).catch(() => undefined);
    },
    close: dropClient,
  };
}
