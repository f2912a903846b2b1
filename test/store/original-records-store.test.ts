/**
 * The original records repository (`src/store/original-records.ts`) on SQLite and, with PROMPTPIPE_TEST_PG_URL, on
 * PostgreSQL: the same tests for both (migration 021 and the queries over inbound messages and deliveries).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const url = process.env['PROMPTPIPE_TEST_PG_URL'];
const runId = randomBytes(4).toString('hex');
/** Every schema created; all are dropped at the end. */
const schemas: string[] = [];
const at = (minutes: number) => new Date(Date.parse('2026-03-02T14:00:00.000Z') + minutes * 60_000);

afterAll(async () => {
  if (!url || schemas.length === 0) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  for (const schema of schemas) await client.query(`drop schema if exists "${schema}" cascade`);
  await client.end();
});

function describeOriginalRecords(name: string, makeStore: () => Promise<Store>): void {
  describe(`original records: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
      await store.participants.create(participantFixture('participant_1', '+15550000001', at(0)));
    });
    afterEach(async () => {
      await store.close();
    });

    it('lists inbound messages and recorded responses together, oldest first, filtered', async () => {
      await store.inbound.record({
        id: 'in_1',
        channel: 'webhook',
        participantId: 'participant_1',
        from: '+15550000001',
        text: '1',
        pollAnswer: { question: 'Which?', option: 'Walk' },
        receivedAt: at(2),
      });
      expect(
        await store.originalRecords.recordResponse({ sender: '+15550000002', body: 'hi', receivedAt: at(1) }),
      ).toBe(true);
      const all = await store.originalRecords.responses();
      expect(all).toEqual([
        { from: '+15550000002', body: 'hi', time: at(1), source: 'api' },
        {
          from: '+15550000001',
          body: '1',
          time: at(2),
          source: 'message',
          pollAnswer: { question: 'Which?', option: 'Walk' },
        },
      ]);
      expect(await store.originalRecords.responses({ phoneNumber: '+15550000002' })).toHaveLength(1);
      expect(await store.originalRecords.responses({ since: at(2) })).toHaveLength(1);
      expect(await store.originalRecords.responses({ until: at(2) })).toHaveLength(1);
      expect((await store.originalRecords.responses({ limit: 1 })).map((row) => row.body)).toEqual(['1']);
      expect(await store.originalRecords.responseFigures()).toEqual({
        total: 2,
        perSender: { '+15550000001': 1, '+15550000002': 1 },
        totalLength: 3,
      });
      expect((await store.originalRecords.responseFigures({ since: at(2) })).total).toBe(1);
    });

    it('lists delivery facts (never queued) and imported receipts as receipts', async () => {
      for (const [status, minutes] of [
        ['queued', 0],
        ['sent', 1],
        ['delivered', 3],
      ] as const) {
        await store.deliveries.record({
          outboundId: 'out_1',
          participantId: 'participant_1',
          channel: 'webhook',
          status,
          createdAt: at(minutes),
        });
      }
      await store.originalRecords.recordImportedReceipt({
        recipient: '+15550000009',
        status: 'read',
        sentAt: at(2),
        importKey: 'original:receipts:1',
      });
      expect(await store.originalRecords.receipts()).toEqual([
        { to: '+15550000001', status: 'sent', time: at(1), source: 'delivery' },
        { to: '+15550000009', status: 'read', time: at(2), source: 'imported' },
        { to: '+15550000001', status: 'delivered', time: at(3), source: 'delivery' },
      ]);
      expect(await store.originalRecords.receipts({ phoneNumber: '+15550000009' })).toHaveLength(1);
    });

    it('imports a row once: its import key is remembered', async () => {
      const response = { sender: '+15550000002', body: 'x', receivedAt: at(0), importKey: 'original:responses:7' };
      expect(await store.originalRecords.recordResponse(response)).toBe(true);
      expect(await store.originalRecords.recordResponse(response)).toBe(false);
      const receipt = { recipient: '+1', status: 'sent', sentAt: at(0), importKey: 'original:receipts:7' };
      expect(await store.originalRecords.recordImportedReceipt(receipt)).toBe(true);
      expect(await store.originalRecords.recordImportedReceipt(receipt)).toBe(false);
      const known = await store.originalRecords.existingImportKeys([
        'original:responses:7',
        'original:receipts:7',
        'original:responses:8',
      ]);
      expect([...known].sort()).toEqual(['original:receipts:7', 'original:responses:7']);
      expect(await store.originalRecords.responses()).toHaveLength(1);
    });
  });
}

describeOriginalRecords('sqlite', () => createSqliteStore({ filename: ':memory:' }));
describe.skipIf(!url)('postgres', () => {
  describeOriginalRecords('postgres', async () => {
    const schema = `promptpipe_test_original_${runId}_${schemas.length + 1}`;
    schemas.push(schema);
    return createPostgresStore({ connectionString: url ?? '', schema });
  });
});
