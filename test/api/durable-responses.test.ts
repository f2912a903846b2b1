/**
 * Group commit at the HTTP edge: a response to a request that may have written waits for `Store.durable()`, so a
 * gateway never gets a 200 for an inbound message a power cut could still lose. Reads do not wait. The store's
 * `durable` is replaced by a controllable one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { type ApiHarness, createApiHarness } from '../support/api-harness.ts';

interface ControlledDurable {
  calls: number;
  /** Resolves (or, with an error, rejects) the calls waiting so far. */
  settle(error?: Error): void;
}

async function harnessWithDurable(): Promise<{ harness: ApiHarness; durable: ControlledDurable }> {
  const store = await createSqliteStore({ filename: ':memory:' });
  let waiting: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const durable: ControlledDurable = {
    calls: 0,
    settle(error) {
      const settling = waiting;
      waiting = [];
      for (const waiter of settling) {
        if (error) waiter.reject(error);
        else waiter.resolve();
      }
    },
  };
  const wrapped: Store = {
    ...store,
    durable: () =>
      new Promise<void>((resolve, reject) => {
        durable.calls += 1;
        waiting.push({ resolve, reject });
      }),
  };
  return { harness: await createApiHarness({ store: wrapped }), durable };
}

const settled = async (promise: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  // Long enough for an in-process request that does not wait to finish.
  for (let tick = 0; tick < 20; tick += 1) await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe('responses wait for durable commits', () => {
  let harness: ApiHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it('answers an enrollment only after the commits are durable', async () => {
    const setup = await harnessWithDurable();
    harness = setup.harness;
    const response = harness.call('POST', '/conversation/participants', { phone_number: '+15551230001' });
    expect(await settled(response)).toBe(false);
    expect(setup.durable.calls).toBe(1);
    setup.durable.settle();
    expect((await response).statusCode).toBe(201);
  });

  it('acknowledges an inbound webhook message only after the commits are durable', async () => {
    const setup = await harnessWithDurable();
    harness = setup.harness;
    const enrolled = await harness.enroll('+15551230001');
    const response = harness.call('POST', '/channels/webhook/messages', {
      from: enrolled.phoneNumber,
      text: 'hello',
      id: 'gateway-1',
    });
    expect(await settled(response)).toBe(false);
    setup.durable.settle();
    expect((await response).statusCode).toBe(202);
  });

  it('does not make reads wait', async () => {
    const setup = await harnessWithDurable();
    harness = setup.harness;
    const response = await harness.call('GET', '/conversation/participants');
    expect(response.statusCode).toBe(200);
    expect(setup.durable.calls).toBe(0);
  });

  it('answers 500 in the envelope when the commits cannot be made durable', async () => {
    const setup = await harnessWithDurable();
    harness = setup.harness;
    const response = harness.call('POST', '/conversation/participants', { phone_number: '+15551230001' });
    expect(await settled(response)).toBe(false);
    setup.durable.settle(new Error('EIO: the disk failed'));
    const answered = await response;
    expect(answered.statusCode).toBe(500);
    expect(answered.json()).toMatchObject({ status: 'error' });
  });
});
