import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const NOW = new Date('2026-03-02T14:00:00.000Z');
let directory: string;
let filename: string;

/** The plan SQLite chooses for `sqlText` (the store binds every value as `+?`, see unary-plus-parameters.ts). */
function planOf(sqlText: string, ...parameters: unknown[]): string {
  const database = new SqliteDatabase(filename, { readonly: true });
  try {
    const rows = database.prepare(`explain query plan ${sqlText}`).all(...parameters) as { detail: string }[];
    return rows.map((row) => row.detail).join('\n');
  } finally {
    database.close();
  }
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'promptpipe-lean-indexes-'));
  filename = join(directory, 'promptpipe.db');
  const store = await createSqliteStore({ filename });
  await store.participants.create(participantFixture('p_1', '+15550000001', NOW));
  for (const [outboundId, channel, providerMessageId] of [
    ['out_1', 'webhook', undefined],
    ['out_2', 'twilio', 'SM123'],
    ['out_3', 'whatsapp-cloud', 'wamid.1'],
  ] as const) {
    await store.deliveries.record({
      outboundId,
      participantId: 'p_1',
      channel,
      status: 'sent',
      createdAt: NOW,
      ...(providerMessageId ? { providerMessageId } : {}),
    });
  }
  expect(await store.deliveries.findByProviderId('twilio', 'SM123')).toMatchObject({ outboundId: 'out_2' });
  await store.close();
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('migration 017: the indexes a turn writes', () => {
  it('indexes only deliveries with a provider id, and a receipt look-up still searches that index', () => {
    const database = new SqliteDatabase(filename, { readonly: true });
    // Entries in the index's pages (one leaf page here): the two deliveries with a provider id, not the webhook's.
    const entries = database
      .prepare(`select sum(ncell) from dbstat where name = 'deliveries_provider_message_index'`)
      .pluck()
      .get();
    const deliveries = database.prepare('select count(*) from deliveries').pluck().get();
    database.close();
    expect([entries, deliveries]).toEqual([2, 3]);
    const plan = planOf(
      'select * from "deliveries" where "channel" = +? and "provider_message_id" = +? order by "id"',
      'twilio',
      'SM123',
    );
    expect(plan).toContain('SEARCH deliveries USING INDEX deliveries_provider_message_index');
  });

  it('reads the whole backlog through the per-participant backlog index', () => {
    const plan = planOf(
      `select * from "inbound_messages" where "status" = 'received' order by "received_at", "arrival_order"`,
    );
    expect(plan).toContain('inbound_messages_participant_received_index');
    expect(plan).not.toContain('inbound_messages_received_index ');
  });
});
