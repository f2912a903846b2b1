/**
 * The ambient unit of work (src/store/unit-of-work.ts), part of the store contract: inside `store.transaction(fn)`,
 * a call on the store itself joins the transaction, without its handle.
 */
import { expect, it } from 'vitest';
import type { Store } from '../../src/store/store.ts';

const AT = new Date('2025-03-01T08:00:00.123Z');

function entry(content: string) {
  return { participantId: 'participant_1', role: 'user', kind: 'message', content, createdAt: AT } as const;
}

export function describeUnitOfWorkContract(current: () => Store): void {
  it('joins a call on the store itself made inside a transaction, and rolls it back with it', async () => {
    const store = current();
    await expect(
      store.transaction(async () => {
        await store.transcript.append([entry('joined')]);
        await store.events.record({ type: 'tool-called', data: {}, createdAt: AT });
        // The same connection and transaction: its own writes are visible through the store.
        expect((await store.transcript.list('participant_1')).map((row) => row.content)).toEqual(['joined']);
        throw new Error('turn failed');
      }),
    ).rejects.toThrow('turn failed');
    expect(await store.transcript.list('participant_1')).toEqual([]);
    expect(await store.events.list()).toEqual([]);

    await store.transaction(async () => {
      await store.transaction(async () => store.transcript.append([entry('kept')]));
    });
    expect((await store.transcript.list('participant_1')).map((row) => row.content)).toEqual(['kept']);
  });

  it("runs the store's after-commit callbacks inside a unit of work after its commit, never after a rollback", async () => {
    const store = current();
    const calls: string[] = [];
    await store.transaction(async () => {
      await store.transcript.append([entry('kept')]);
      store.afterCommit(() => calls.push('committed'));
      expect(calls).toEqual([]);
    });
    expect(calls).toEqual(['committed']);
    await expect(
      store.transaction(async () => {
        store.afterCommit(() => calls.push('rolled back'));
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(calls).toEqual(['committed']);
  });

  it('does not let work left running after the unit of work ended join it', async () => {
    const store = current();
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let background: Promise<unknown> = Promise.resolve();
    await store.transaction(async () => {
      background = released.then(() => store.transcript.append([entry('after the commit')]));
    });
    release();
    await background;
    expect((await store.transcript.list('participant_1')).map((row) => row.content)).toEqual(['after the commit']);
  });
}
