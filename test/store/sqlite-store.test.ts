import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore, WAL_AUTOCHECKPOINT_PAGES } from '../../src/store/sqlite/sqlite-store.ts';
import { participantFixture } from '../support/participant-fixture.ts';
import { describeStoreContract } from './store-contract.ts';

const directory = mkdtempSync(join(tmpdir(), 'promptpipe-sqlite-store-'));
let fileCounter = 0;

function nextFilename(): string {
  fileCounter += 1;
  return join(directory, `store-${fileCounter}.db`);
}

afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

describeStoreContract('sqlite :memory:', () => createSqliteStore({ filename: ':memory:' }));
describeStoreContract('sqlite file', () => createSqliteStore({ filename: nextFilename() }));

describe('sqlite store', () => {
  it('reports its dialect', async () => {
    const store = await createSqliteStore({ filename: ':memory:' });
    expect(store.dialect).toBe('sqlite');
    await store.close();
  });

  it('keeps everything, jobs included, across close and reopen', async () => {
    const filename = nextFilename();
    const now = new Date('2025-03-01T08:00:00.000Z');
    const store = await createSqliteStore({ filename });
    await store.participants.create(participantFixture('participant_1', '+15550000001', now, { name: 'Ada' }));
    await store.flowStates.save({
      participantId: 'participant_1',
      flowType: 'conversation',
      currentState: 'CONVERSATION_ACTIVE',
      stateData: { conversationState: 'FEEDBACK' },
      createdAt: now,
      updatedAt: now,
    });
    await store.transcript.append([
      { participantId: 'participant_1', role: 'user', kind: 'message', content: 'hi', createdAt: now },
    ]);
    await store.events.record({ type: 'participant-enrolled', data: { by: 'test' }, createdAt: now });
    await store.inbound.record({
      id: 'inbound_1',
      channel: 'whatsapp',
      participantId: 'participant_1',
      providerMessageId: 'wamid.1',
      from: '+15550000001',
      text: 'hi',
      receivedAt: now,
    });
    await store.jobs.enqueue(
      { id: 'job_pending', kind: 'reminder', runAt: now, payload: { n: 1 }, dedupKey: 'k' },
      now,
    );
    await store.jobs.enqueue({ id: 'job_running', kind: 'reminder', runAt: new Date(0), payload: {} }, now);
    await store.jobs.claimDue({ now, owner: 'crashed-worker', leaseMs: 60_000, limit: 1 });
    await store.close();

    const reopened = await createSqliteStore({ filename });
    expect(await reopened.participants.get('participant_1')).toMatchObject({ name: 'Ada', enrolledAt: now });
    expect((await reopened.flowStates.get('participant_1'))?.stateData).toEqual({ conversationState: 'FEEDBACK' });
    expect((await reopened.transcript.list('participant_1')).map((entry) => entry.content)).toEqual(['hi']);
    expect(await reopened.events.list()).toHaveLength(1);
    const redelivered = await reopened.inbound.record({
      id: 'inbound_2',
      channel: 'whatsapp',
      participantId: 'participant_1',
      providerMessageId: 'wamid.1',
      from: '+15550000001',
      text: 'hi',
      receivedAt: now,
    });
    expect(redelivered).toMatchObject({ duplicate: true, message: { id: 'inbound_1' } });
    expect(await reopened.jobs.getPendingByKey('k')).toMatchObject({ id: 'job_pending', payload: { n: 1 } });
    expect(await reopened.jobs.get('job_running')).toMatchObject({ status: 'running', leaseOwner: 'crashed-worker' });
    const afterLease = new Date(now.getTime() + 60_001);
    const claimed = await reopened.jobs.claimDue({ now: afterLease, owner: 'new-worker', leaseMs: 1000, limit: 10 });
    expect(claimed.map((job) => [job.id, job.attempts])).toEqual([
      ['job_running', 2],
      ['job_pending', 1],
    ]);
    await reopened.close();
  });

  it('opens a file in WAL mode with foreign keys enforced', async () => {
    const filename = nextFilename();
    const store = await createSqliteStore({ filename });
    await expect(
      store.flowStates.save({
        participantId: 'participant_missing',
        flowType: 'conversation',
        currentState: 'CONVERSATION_ACTIVE',
        stateData: {},
        createdAt: new Date(),
        updatedAt: new Date(),
      }),
    ).rejects.toThrow(/FOREIGN KEY/);
    await store.close();
    const raw = new SqliteDatabase(filename, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
  });

  it("lets the WAL grow past SQLite's default 1,000 pages before a commit checkpoints it", async () => {
    const filename = nextFilename();
    const store = await createSqliteStore({ filename });
    // About 1,500 pages of transcript, each entry committed on its own.
    const content = 'x'.repeat(20_000);
    for (let index = 0; index < 300; index += 1) {
      await store.transcript.append([
        { participantId: 'participant_1', role: 'user', kind: 'message', content, createdAt: new Date() },
      ]);
    }
    const pageSize = 4096;
    // At the default, the WAL would have been checkpointed and started over at about 1,000 pages.
    expect(statSync(`${filename}-wal`).size).toBeGreaterThan(1_200 * pageSize);
    expect(statSync(`${filename}-wal`).size).toBeLessThan(WAL_AUTOCHECKPOINT_PAGES * (pageSize + 24));
    expect(await store.transcript.list('participant_1')).toHaveLength(300);
    await store.close();
  });
});

describe('sqlite store: prepared queries run at once, never inside another caller’s transaction', () => {
  const now = new Date('2025-03-01T08:00:00.000Z');

  it('a write outside a transaction waits for an open one, and outlives its rollback', async () => {
    const store = await createSqliteStore({ filename: nextFilename() });
    try {
      await store.participants.create(participantFixture('participant_1', '+15550000001', now));
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let entered: () => void = () => {};
      const inside = new Promise<void>((resolve) => {
        entered = resolve;
      });
      const order: string[] = [];
      const rolledBack = store.transaction(async (tx) => {
        await tx.transcript.append([
          { participantId: 'participant_1', role: 'user', kind: 'message', content: 'uncommitted', createdAt: now },
        ]);
        entered();
        await gate;
        // The transaction's last statement, after the outside calls began: they must not have run in here.
        const outside = await tx.events.list({ type: 'outside' });
        order.push(`transaction sees ${outside.length} outside events`);
        throw new Error('rolled back on purpose');
      });
      await inside;
      const outsideWrite = store.events
        .record({ participantId: 'participant_1', type: 'outside', data: {}, createdAt: now })
        .then(() => order.push('event recorded'));
      const outsideRead = store.transcript
        .list('participant_1', { limit: 5 })
        .then((entries) => order.push(`read ${entries.length}`));
      release();
      await expect(rolledBack).rejects.toThrow('rolled back on purpose');
      await Promise.all([outsideWrite, outsideRead]);
      // Both waited for the transaction's end: they finished after its last statement, and saw its rollback.
      expect(order).toEqual(['transaction sees 0 outside events', 'event recorded', 'read 0']);
      expect((await store.events.list({ type: 'outside' })).map((event) => event.participantId)).toEqual([
        'participant_1',
      ]);
      expect(await store.transcript.list('participant_1')).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
