import { afterEach, describe, expect, it } from 'vitest';
import { MAX_STORED_HISTORY } from '../../src/domain/history.ts';
import { readData, writeData } from '../../src/domain/participant-data.ts';
import {
  appendToHistory,
  HISTORY_TRIM_EVERY,
  readDataWithHistory,
  readHistory,
  readHistoryValue,
} from '../../src/engine/conversation-history.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const NOW = new Date('2026-03-02T14:00:00.000Z');
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

async function storeWithParticipant(): Promise<Store> {
  const store = await createSqliteStore({ filename: ':memory:' });
  stores.push(store);
  await store.participants.create(participantFixture('p_1', '+15550000001', NOW));
  return store;
}

const message = (role: 'user' | 'assistant', content: string) => ({ role, content, timestamp: NOW.toISOString() });
const contents = async (store: Store) => (await readHistory(store, 'p_1')).map((entry) => entry.content);

describe('working history', () => {
  it('reads back what was appended, oldest first and at most 50, and shows it as the contract value', async () => {
    const store = await storeWithParticipant();
    for (let index = 0; index < 30; index += 1) {
      await appendToHistory(store, 'p_1', [message('user', `q${index}`), message('assistant', `a${index}`)]);
    }
    const special = 'a "quoted"\nline, \\ ☕ \u2028 </script>';
    await appendToHistory(store, 'p_1', [message('user', special)]);
    const history = await readHistory(store, 'p_1');
    expect(history).toHaveLength(50);
    expect(history[0]?.content).toBe('a5');
    expect(history.at(-1)?.content).toBe(special);
    // The `conversationHistory` value is what serialising the kept messages gives, byte for byte.
    expect(await readHistoryValue(store, 'p_1')).toBe(JSON.stringify({ messages: history }));
    // Not in the flow state's row any more: appending wrote no state data.
    expect(await readData(store, 'p_1')).toEqual({});
  });

  it('keeps the rows bounded: older ones are deleted in batches, and numbering goes on', async () => {
    const store = await storeWithParticipant();
    for (let index = 0; index < 95; index += 1) await appendToHistory(store, 'p_1', [message('user', `m${index}`)]);
    const rows = await store.history.latest('p_1', 1_000);
    expect(rows.length).toBeGreaterThanOrEqual(MAX_STORED_HISTORY);
    expect(rows.length).toBeLessThan(MAX_STORED_HISTORY + HISTORY_TRIM_EVERY);
    expect(rows.at(-1)).toEqual({ seq: 95, message: JSON.stringify(message('user', 'm94')) });
    expect(rows.map((row) => row.seq)).toEqual(rows.map((_, index) => 96 - rows.length + index));
    expect(await contents(store)).toEqual(Array.from({ length: 50 }, (_, index) => `m${index + 45}`));
  });

  it('reads a history written elsewhere anew, dropping what is not a message, and appends after it', async () => {
    const store = await storeWithParticipant();
    await appendToHistory(store, 'p_1', [message('user', 'first')]);
    expect(await contents(store)).toEqual(['first']);
    // Another writer (another instance on PostgreSQL) adds rows: the remembered copy no longer ends where they do.
    await store.history.append('p_1', 2, [
      JSON.stringify({ role: 'system', content: 'dropped' }),
      'not json',
      JSON.stringify(message('assistant', 'kept')),
    ]);
    expect(await contents(store)).toEqual(['first', 'kept']);
    await appendToHistory(store, 'p_1', [message('user', 'next')]);
    expect((await store.history.newest('p_1'))?.seq).toBe(5);
    expect(await contents(store)).toEqual(['first', 'kept', 'next']);
  });

  it('forgets an append whose transaction rolled back, and the next one takes its number', async () => {
    const store = await storeWithParticipant();
    await appendToHistory(store, 'p_1', [message('user', 'kept')]);
    await expect(
      store.transaction(async (tx) => {
        await appendToHistory(tx, 'p_1', [message('assistant', 'rolled back')]);
        expect(await contents(tx)).toEqual(['kept', 'rolled back']);
        throw new Error('the turn failed');
      }),
    ).rejects.toThrow('the turn failed');
    expect(await contents(store)).toEqual(['kept']);
    await appendToHistory(store, 'p_1', [message('assistant', 'retried')]);
    expect(await store.history.latest('p_1', 10)).toEqual([
      { seq: 1, message: JSON.stringify(message('user', 'kept')) },
      { seq: 2, message: JSON.stringify(message('assistant', 'retried')) },
    ]);
  });

  it('hands out copies: changing what was read changes neither the store nor the next read', async () => {
    const store = await storeWithParticipant();
    await appendToHistory(store, 'p_1', [message('user', 'hello')]);
    const first = await readHistory(store, 'p_1');
    first.push(message('assistant', 'not stored'));
    expect(() => {
      (first[0] as { content: string }).content = 'changed';
    }).toThrow(TypeError);
    expect(await readHistory(store, 'p_1')).toEqual([message('user', 'hello')]);
    // The caller's own message objects stay theirs: not frozen, and changing them later changes nothing stored.
    const mine = message('assistant', 'mine');
    await appendToHistory(store, 'p_1', [mine]);
    mine.content = 'edited';
    expect(await contents(store)).toEqual(['hello', 'mine']);
  });

  it('keeps each database its own: two stores with the same participant and the same newest message', async () => {
    const first = await storeWithParticipant();
    const second = await storeWithParticipant();
    await appendToHistory(first, 'p_1', [message('user', 'from the first'), message('assistant', 'Good morning!')]);
    await appendToHistory(second, 'p_1', [message('user', 'from the second'), message('assistant', 'Good morning!')]);
    expect((await readHistory(first, 'p_1')).map((entry) => entry.content)).toEqual([
      'from the first',
      'Good morning!',
    ]);
    expect(await contents(second)).toEqual(['from the second', 'Good morning!']);
  });

  it('shows the stored history under its contract key, whatever an older version left in the state data', async () => {
    const store = await storeWithParticipant();
    await writeData(store, 'p_1', { conversationState: 'INTAKE', conversationHistory: '{"messages":[]}' }, NOW);
    expect(await readDataWithHistory(store, 'p_1')).toEqual({ conversationState: 'INTAKE' });
    await appendToHistory(store, 'p_1', [message('user', 'hello')]);
    const data = await readDataWithHistory(store, 'p_1');
    expect(data).toEqual({
      conversationHistory: JSON.stringify({ messages: [message('user', 'hello')] }),
      conversationState: 'INTAKE',
    });
    expect(Object.keys(data)[0]).toBe('conversationHistory');
  });

  it('goes with its participant', async () => {
    const store = await storeWithParticipant();
    await appendToHistory(store, 'p_1', [message('user', 'hello')]);
    await store.participants.delete('p_1');
    expect(await store.history.latest('p_1', 10)).toEqual([]);
    expect(await readHistoryValue(store, 'p_1')).toBe('');
  });
});
