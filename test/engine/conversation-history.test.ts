import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../src/domain/data-keys.ts';
import { parseHistory } from '../../src/domain/history.ts';
import { appendToHistory, readHistory } from '../../src/engine/conversation-history.ts';
import { readValue, writeData } from '../../src/engine/participant-data.ts';
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

describe('working history', () => {
  it('reads back what was appended, as parsing the stored text gives it, oldest first and at most 50', async () => {
    const store = await storeWithParticipant();
    for (let index = 0; index < 30; index += 1) {
      await appendToHistory(store, 'p_1', [message('user', `q${index}`), message('assistant', `a${index}`)], NOW);
    }
    const special = 'a "quoted"\nline, \\ ☕ \u2028 </script>';
    await appendToHistory(store, 'p_1', [message('user', special)], NOW);
    const history = await readHistory(store, 'p_1');
    expect(history).toHaveLength(50);
    expect(history[0]?.content).toBe('a5');
    expect(history.at(-1)?.content).toBe(special);
    const stored = await readValue(store, 'p_1', DataKey.conversationHistory);
    expect(history).toEqual(parseHistory(stored).messages);
    // Written as serialising the kept messages gives it, byte for byte.
    expect(stored).toBe(JSON.stringify({ messages: history }));
  });

  it('parses a history written elsewhere, dropping what is not a message, and appends to it', async () => {
    const store = await storeWithParticipant();
    const stored = JSON.stringify({
      messages: [message('user', 'kept'), { role: 'system', content: 'dropped' }, { role: 'user' }, 'text'],
    });
    await writeData(store, 'p_1', { [DataKey.conversationHistory]: stored }, NOW);
    expect((await readHistory(store, 'p_1')).map((entry) => entry.content)).toEqual(['kept']);
    await appendToHistory(store, 'p_1', [message('assistant', 'reply')], NOW);
    expect((await readHistory(store, 'p_1')).map((entry) => entry.content)).toEqual(['kept', 'reply']);
    expect(await readValue(store, 'p_1', DataKey.conversationHistory)).toBe(
      JSON.stringify({ messages: [message('user', 'kept'), message('assistant', 'reply')] }),
    );
    // Rewritten by hand to a text seen before: read as that text says, not as it was last appended.
    await writeData(store, 'p_1', { [DataKey.conversationHistory]: stored }, NOW);
    expect((await readHistory(store, 'p_1')).map((entry) => entry.content)).toEqual(['kept']);
  });

  it('hands out copies: changing what was read changes neither the store nor the next read', async () => {
    const store = await storeWithParticipant();
    await appendToHistory(store, 'p_1', [message('user', 'hello')], NOW);
    const first = await readHistory(store, 'p_1');
    first.push(message('assistant', 'not stored'));
    expect(() => {
      (first[0] as { content: string }).content = 'changed';
    }).toThrow(TypeError);
    expect(await readHistory(store, 'p_1')).toEqual([message('user', 'hello')]);
    // The caller's own message objects stay theirs: not frozen, and changing them later changes nothing stored.
    const mine = message('assistant', 'mine');
    await appendToHistory(store, 'p_1', [mine], NOW);
    mine.content = 'edited';
    expect((await readHistory(store, 'p_1')).map((entry) => entry.content)).toEqual(['hello', 'mine']);
  });
});
