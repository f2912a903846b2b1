import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withRecentTranscriptCache } from '../../src/store/sqlite/recent-transcript-cache.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { NewTranscriptEntry, Store, TranscriptEntry, TranscriptKind } from '../../src/store/store.ts';

const NOW = new Date('2026-03-02T14:00:00.000Z');

const message = (content: string, participantId = 'p_1'): NewTranscriptEntry => ({
  participantId,
  role: 'user',
  kind: 'message',
  content,
  createdAt: NOW,
});
const sent = (content: string, kind: TranscriptKind = 'reply', participantId = 'p_1'): NewTranscriptEntry => ({
  participantId,
  role: 'assistant',
  kind,
  content,
  createdAt: NOW,
});
const contents = (entries: readonly TranscriptEntry[]) => entries.map((entry) => entry.content);

/**
 * The cache in front of a SQLite store, counting the look-ups it passes on. What it answers is checked against the
 * whole transcript as the database lists it: the entries after the participant's latest message.
 */
describe('recent transcript cache', () => {
  let inner: Store;
  let store: Store;
  let passedOn: number;
  beforeEach(async () => {
    inner = await createSqliteStore({ filename: ':memory:' });
    passedOn = 0;
    const counted: Store = {
      ...inner,
      transcript: {
        ...inner.transcript,
        afterLastMessage: (participantId, options) => {
          passedOn += 1;
          return inner.transcript.afterLastMessage(participantId, options);
        },
      },
    };
    store = withRecentTranscriptCache(counted);
  });
  afterEach(async () => {
    await inner.close();
  });

  async function fromDatabase(participantId: string): Promise<string[]> {
    const all = await inner.transcript.list(participantId);
    return contents(all.slice(all.findLastIndex((entry) => entry.role === 'user') + 1));
  }

  it('answers from what was appended once a message was, and follows every later append', async () => {
    await store.transcript.append([sent('greeting')]);
    // Never written: not known, so read.
    expect(contents(await store.transcript.afterLastMessage('p_1', { limit: 30 }))).toEqual(['greeting']);
    expect(passedOn).toBe(1);
    await store.transcript.append([message('hello'), sent('', 'tool_call'), sent('result', 'tool_result')]);
    await store.transcript.append([sent('reply')]);
    await store.transaction(async (tx) => {
      await tx.transcript.append([sent('prompt', 'proactive'), sent('done?', 'poll')]);
    });
    expect(contents(await store.transcript.afterLastMessage('p_1', { limit: 30 }))).toEqual(await fromDatabase('p_1'));
    expect(contents(await store.transcript.afterLastMessage('p_1', { limit: 2 }))).toEqual(['prompt', 'done?']);
    expect(passedOn).toBe(1);
    await store.transcript.append([message('Done')]);
    expect(await store.transcript.afterLastMessage('p_1', { limit: 30 })).toEqual([]);
    expect(passedOn).toBe(1);
  });

  it('keeps each participant apart, and hands out copies', async () => {
    await store.transcript.append([message('a', 'p_1'), message('b', 'p_2'), sent('to a', 'reply', 'p_1')]);
    await store.transcript.append([sent('to b', 'reply', 'p_2')]);
    const first = await store.transcript.afterLastMessage('p_1', { limit: 30 });
    expect(contents(first)).toEqual(['to a']);
    (first[0] as { content: string }).content = 'changed';
    first[0]?.createdAt.setUTCFullYear(1999);
    const again = await store.transcript.afterLastMessage('p_1', { limit: 30 });
    expect(contents(again)).toEqual(['to a']);
    expect(again[0]?.createdAt).toEqual(NOW);
    expect(contents(await store.transcript.afterLastMessage('p_2', { limit: 30 }))).toEqual(['to b']);
    expect(passedOn).toBe(0);
  });

  it('counts a transaction only once it commits, and reads its own appends inside it', async () => {
    await store.transcript.append([message('hello'), sent('reply')]);
    await expect(
      store.transaction(async (tx) => {
        await tx.transcript.append([sent('poll', 'poll')]);
        expect(contents(await tx.transcript.afterLastMessage('p_1', { limit: 30 }))).toEqual(['reply', 'poll']);
        // Outside it, until it commits: what is committed.
        expect(contents(await store.transcript.afterLastMessage('p_1', { limit: 30 }))).toEqual(['reply']);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(contents(await store.transcript.afterLastMessage('p_1', { limit: 30 }))).toEqual(['reply']);
    expect(await fromDatabase('p_1')).toEqual(['reply']);
  });

  it('forgets a purged participant', async () => {
    await store.transcript.append([message('hello'), sent('reply')]);
    await store.transaction(async (tx) => {
      await tx.transcript.purge('p_1');
      await tx.transcript.append([sent('after purge')]);
    });
    expect(contents(await store.transcript.afterLastMessage('p_1', { limit: 30 }))).toEqual(['after purge']);
    expect(passedOn).toBe(1);
  });

  it('forgets a participant whose commits it learns of out of order, rather than merge them wrongly', async () => {
    // The first transaction's commit is reported only after a second one's: its entries have the lower ids.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let calls = 0;
    const slow = withRecentTranscriptCache({
      ...inner,
      transaction: async (fn) => {
        calls += 1;
        const first = calls === 1;
        const result = await inner.transaction(fn);
        if (first) await held;
        return result;
      },
    });
    await slow.transcript.append([message('hello')]);
    calls = 0;
    const one = slow.transaction((tx) => tx.transcript.append([sent('one')]));
    await slow.transaction((tx) => tx.transcript.append([sent('two')]));
    release();
    await one;
    expect(contents(await slow.transcript.afterLastMessage('p_1', { limit: 30 }))).toEqual(['one', 'two']);
  });

  it('forgets a participant with more unanswered entries than it keeps, and reads them instead', async () => {
    await store.transcript.append([message('hello')]);
    for (let index = 0; index < 51; index += 1) await store.transcript.append([sent(`broadcast ${index}`)]);
    const entries = await store.transcript.afterLastMessage('p_1', { limit: 60 });
    expect(entries).toHaveLength(51);
    expect(passedOn).toBe(1);
  });
});
