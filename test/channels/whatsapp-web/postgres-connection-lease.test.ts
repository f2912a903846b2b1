/**
 * Several instances on one PostgreSQL database: exactly one holds the WhatsApp connection; when it stops, another
 * takes over. Needs PROMPTPIPE_TEST_PG_URL.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createPostgresConnectionLease } from '../../../src/channels/whatsapp-web/postgres-connection-lease.ts';
import { createPostgresStore } from '../../../src/store/postgres/postgres-store.ts';
import { FakeWhatsApp } from '../../support/fake-whatsapp-socket.ts';
import { linkFakeAccount, startChannel } from './whatsapp-web-harness.ts';

const url = process.env['PROMPTPIPE_TEST_PG_URL'];
if (!url) console.warn('PostgreSQL connection lease tests skipped: PROMPTPIPE_TEST_PG_URL is not set');
const schemas: string[] = [];

afterAll(async () => {
  if (!url || schemas.length === 0) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  for (const schema of schemas) await client.query(`drop schema if exists "${schema}" cascade`);
  await client.end();
});

describe.skipIf(!url)('PostgreSQL connection lease', () => {
  const connectionString = url ?? '';

  it('grants the advisory lock to one holder at a time and frees it on release or close', async () => {
    const name = `promptpipe:test:${randomBytes(4).toString('hex')}`;
    const first = createPostgresConnectionLease({ connectionString, name });
    const second = createPostgresConnectionLease({ connectionString, name });
    try {
      expect(await first.tryAcquire(() => undefined)).toBe(true);
      expect(await first.tryAcquire(() => undefined)).toBe(true);
      expect(await second.tryAcquire(() => undefined)).toBe(false);
      await first.release();
      expect(await second.tryAcquire(() => undefined)).toBe(true);
      expect(await first.tryAcquire(() => undefined)).toBe(false);
      await second.close();
      expect(await first.tryAcquire(() => undefined)).toBe(true);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('lets exactly one of two instances connect, and the other take over when it stops', async () => {
    const schema = `promptpipe_lease_${randomBytes(4).toString('hex')}`;
    schemas.push(schema);
    const name = `promptpipe:whatsapp-web:${schema}`;
    const storeA = await createPostgresStore({ connectionString, schema });
    const storeB = await createPostgresStore({ connectionString, schema });
    const whatsapp = new FakeWhatsApp();
    await linkFakeAccount(storeA, whatsapp);
    const a = startChannel(storeA, whatsapp, { lease: createPostgresConnectionLease({ connectionString, name }) });
    const b = startChannel(storeB, whatsapp, { lease: createPostgresConnectionLease({ connectionString, name }) });
    try {
      await a.start?.();
      await vi.waitFor(() => expect(a.connectionState()).toBe('open'), { timeout: 5_000 });
      await b.start?.();
      await vi.waitFor(() => expect(b.connectionState()).toBe('waiting_for_lease'), { timeout: 5_000 });
      const openSockets = whatsapp.sockets.filter((socket) => socket.open);
      expect(openSockets).toHaveLength(1);

      await a.stop?.();
      await vi.waitFor(() => expect(b.connectionState()).toBe('open'), { timeout: 5_000 });
      expect(whatsapp.sockets.filter((socket) => socket.open)).toHaveLength(1);
    } finally {
      await a.stop?.();
      await b.stop?.();
      await storeA.close();
      await storeB.close();
    }
  });
});
