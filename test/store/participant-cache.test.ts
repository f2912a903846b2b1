import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Participant } from '../../src/domain/participant.ts';
import { withParticipantCache } from '../../src/store/sqlite/participant-cache.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const NOW = new Date('2026-03-02T14:00:00.000Z');

const participant = (id: string, phoneNumber: string, overrides: Partial<Participant> = {}): Participant =>
  participantFixture(id, phoneNumber, NOW, overrides);

/** The SQLite store caches participants (participant-cache.ts); these are the cases where a cache could lie. */
describe('participant cache (SQLite store)', () => {
  let store: Store;
  beforeEach(async () => {
    store = await createSqliteStore({ filename: ':memory:' });
    await store.participants.create(participant('participant_1', '+15550000001'));
  });
  afterEach(async () => {
    await store.close();
  });

  it('sees an update made outside a transaction, by id and by phone number', async () => {
    expect((await store.participants.get('participant_1'))?.status).toBe('active');
    expect((await store.participants.getByPhone('+15550000001'))?.status).toBe('active');
    await store.participants.update('participant_1', { status: 'paused', updatedAt: NOW });
    expect((await store.participants.get('participant_1'))?.status).toBe('paused');
    expect((await store.participants.getByPhone('+15550000001'))?.status).toBe('paused');
  });

  it('does not let a caller change the cached value by mutating what it read', async () => {
    const first = await store.participants.get('participant_1');
    if (!first) throw new Error('no participant');
    first.name = 'Mutated';
    first.enrolledAt.setUTCFullYear(1999);
    const again = await store.participants.get('participant_1');
    expect(again?.name).toBe('');
    expect(again?.enrolledAt).toEqual(NOW);
  });

  it('shows everyone the committed update after a transaction, and the transaction its own', async () => {
    await store.participants.get('participant_1');
    await store.transaction(async (tx) => {
      await tx.participants.update('participant_1', { name: 'Ada', updatedAt: NOW });
      expect((await tx.participants.get('participant_1'))?.name).toBe('Ada');
    });
    expect((await store.participants.get('participant_1'))?.name).toBe('Ada');
    expect((await store.participants.getByPhone('+15550000001'))?.name).toBe('Ada');
  });

  it('forgets the update of a transaction that rolled back', async () => {
    await store.participants.get('participant_1');
    await expect(
      store.transaction(async (tx) => {
        await tx.participants.update('participant_1', { status: 'withdrawn', updatedAt: NOW });
        throw new Error('rolled back on purpose');
      }),
    ).rejects.toThrow('rolled back on purpose');
    expect((await store.participants.get('participant_1'))?.status).toBe('active');
  });

  it('forgets a deleted participant, by id and by phone number, and never caches a miss', async () => {
    await store.participants.getByPhone('+15550000001');
    expect(await store.participants.delete('participant_1')).toBe(true);
    expect(await store.participants.get('participant_1')).toBeUndefined();
    expect(await store.participants.getByPhone('+15550000001')).toBeUndefined();
    // The number enrols again, under a new id, and is found at once.
    await store.participants.create(participant('participant_2', '+15550000001'));
    expect((await store.participants.getByPhone('+15550000001'))?.id).toBe('participant_2');
    await store.transaction((tx) => tx.participants.delete('participant_2'));
    expect(await store.participants.getByPhone('+15550000001')).toBeUndefined();
    expect(await store.participants.get('participant_2')).toBeUndefined();
  });
});

describe('participant cache: what reaches the database', () => {
  it('reads a participant once, and again only after a write', async () => {
    const inner = await createSqliteStore({ filename: ':memory:' });
    const reads: string[] = [];
    const counting: Store = {
      ...inner,
      participants: {
        ...inner.participants,
        async get(id) {
          reads.push(`id ${id}`);
          return inner.participants.get(id);
        },
        async getByPhone(phoneNumber) {
          reads.push(`phone ${phoneNumber}`);
          return inner.participants.getByPhone(phoneNumber);
        },
      },
    };
    const store = withParticipantCache(counting);
    try {
      await store.participants.create(participant('participant_1', '+15550000001'));
      expect(await store.participants.get('participant_1')).toMatchObject({ id: 'participant_1' });
      await store.participants.get('participant_1');
      await store.participants.getByPhone('+15550000001');
      expect(reads).toEqual(['id participant_1']);
      expect(await store.participants.getByPhone('+15550000002')).toBeUndefined();
      expect(await store.participants.getByPhone('+15550000002')).toBeUndefined();
      expect(reads).toEqual(['id participant_1', 'phone +15550000002', 'phone +15550000002']);
      await store.participants.update('participant_1', { name: 'Ada', updatedAt: NOW });
      expect((await store.participants.getByPhone('+15550000001'))?.name).toBe('Ada');
      expect(reads.at(-1)).toBe('phone +15550000001');
    } finally {
      await inner.close();
    }
  });

  it('inside a transaction, reads a participant it has not written from the cache, and one it wrote from the database', async () => {
    const inner = await createSqliteStore({ filename: ':memory:' });
    const reads: string[] = [];
    const counted = (participants: Store['participants'], where: string): Store['participants'] => ({
      ...participants,
      async get(id) {
        reads.push(`${where} id ${id}`);
        return participants.get(id);
      },
      async getByPhone(phoneNumber) {
        reads.push(`${where} phone ${phoneNumber}`);
        return participants.getByPhone(phoneNumber);
      },
    });
    const counting: Store = {
      ...inner,
      participants: counted(inner.participants, 'outside'),
      transaction: (fn) => inner.transaction((tx) => fn({ ...tx, participants: counted(tx.participants, 'tx') })),
    };
    const store = withParticipantCache(counting);
    try {
      await store.participants.create(participant('participant_1', '+15550000001'));
      await store.participants.create(participant('participant_2', '+15550000002'));
      await store.participants.get('participant_1');
      await store.participants.get('participant_2');
      reads.length = 0;
      const seen = await store.transaction(async (tx) => {
        const before = await tx.participants.get('participant_1');
        const byPhone = await tx.participants.getByPhone('+15550000001');
        await tx.participants.update('participant_1', { name: 'Ada', updatedAt: NOW });
        const own = await tx.participants.get('participant_1');
        const ownByPhone = await tx.participants.getByPhone('+15550000001');
        const other = await tx.participants.get('participant_2');
        return [before?.name, byPhone?.name, own?.name, ownByPhone?.name, other?.id];
      });
      expect(seen).toEqual(['', '', 'Ada', 'Ada', 'participant_2']);
      expect(reads).toEqual(['tx id participant_1', 'tx phone +15550000001']);
      // Not cached inside the transaction that wrote it; read again once it committed.
      expect((await store.participants.get('participant_1'))?.name).toBe('Ada');
      expect(reads.at(-1)).toBe('outside id participant_1');
    } finally {
      await inner.close();
    }
  });
});
