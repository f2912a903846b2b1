import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/engine/tool.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { insideUnitOfWork } from '../../src/store/unit-of-work.ts';
import { createEngineHarness, type EngineHarness } from '../support/engine-harness.ts';

let harness: EngineHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** A SQLite store that counts the transactions begun while `phase.counting` is set, and can fail result records. */
async function countingStore() {
  const real = await createSqliteStore({ filename: ':memory:' });
  const phase = { counting: false, transactions: 0, failResultRecords: 0 };
  const store: Store = {
    ...real,
    events: {
      ...real.events,
      async record(event) {
        if (event.type === 'tool-called' && phase.failResultRecords > 0) {
          phase.failResultRecords -= 1;
          throw new Error('database is locked');
        }
        return real.events.record(event);
      },
    },
    transaction: (fn) => {
      // A call inside a unit of work joins it: only the others begin a transaction.
      if (phase.counting && !insideUnitOfWork()) phase.transactions += 1;
      return real.transaction(() => fn(store));
    },
  };
  return { store, phase };
}

async function toolTurn(options: { failResultRecords?: number; extraTools?: ReturnType<typeof defineTool>[] } = {}) {
  const { store, phase } = await countingStore();
  phase.failResultRecords = options.failResultRecords ?? 0;
  let exchangeTransactions = -1;
  harness = await createEngineHarness({
    store,
    ...(options.extraTools ? { extraTools: options.extraTools } : {}),
    script: [
      () => {
        phase.counting = true;
        return { toolCalls: [{ name: 'save_user_profile', arguments: { habit_domain: 'movement' } }] };
      },
      () => {
        exchangeTransactions = phase.transactions;
        phase.counting = false;
        return { content: 'Saved. What time suits you?' };
      },
    ],
  });
  const result = await harness.send('I want to move more');
  const entries = await store.transcript.list(harness.participant.id);
  return { result, entries, exchangeTransactions, store, harness };
}

describe('a tool exchange of database-only tools', () => {
  it('records the call, runs the tool and records its result in one transaction', async () => {
    const turn = await toolTurn();
    expect(turn.exchangeTransactions).toBe(1);
    expect(turn.result.toolsCalled).toEqual(['save_user_profile']);
    expect(turn.entries.map((entry) => entry.kind)).toEqual(['message', 'tool_call', 'tool_result']);
    expect((await turn.harness.profile()).habit_domain).toBe('movement');
    const [event] = await turn.store.events.list({ type: 'tool-called' });
    expect(event?.data).toMatchObject({ name: 'save_user_profile', outcome: 'success' });
  });

  it('keeps the profile snapshot once, in the transcript, and the rest of the result in the event', async () => {
    const turn = await toolTurn();
    const resultEntry = turn.entries.find((entry) => entry.kind === 'tool_result');
    const stored = JSON.parse(resultEntry?.content ?? '{}') as { profile?: { habit_domain?: string } };
    expect(stored.profile?.habit_domain).toBe('movement');
    const [event] = await turn.store.events.list({ type: 'tool-called' });
    expect(event?.data['call_id']).toBe(resultEntry?.toolCallId);
    expect(event?.data['result']).toEqual({
      status: 'success',
      message: 'Saved habit_domain.',
      updated_fields: ['habit_domain'],
    });
  });

  it('runs the exchange again when that transaction fails, keeping nothing of the failed run', async () => {
    const turn = await toolTurn({ failResultRecords: 1 });
    // The failed run (call, profile write, result) rolled back; the next run recorded each once.
    expect(turn.entries.map((entry) => entry.kind)).toEqual(['message', 'tool_call', 'tool_result']);
    expect(await turn.store.events.list({ type: 'tool-called' })).toHaveLength(1);
    expect((await turn.harness.profile()).habit_domain).toBe('movement');
    expect(turn.exchangeTransactions).toBeGreaterThan(1);
  });

  it('runs a tool that is not transactional step by step, outside any transaction', async () => {
    const seen: boolean[] = [];
    const lookup = defineTool({
      name: 'save_user_profile',
      description: 'a stand-in that is not transactional',
      schema: z.object({ habit_domain: z.string() }),
      async execute() {
        seen.push(insideUnitOfWork());
        return { status: 'success', message: 'ok' };
      },
    });
    const turn = await toolTurn({ extraTools: [lookup] });
    expect(seen).toEqual([false]);
    expect(turn.entries.map((entry) => entry.kind)).toEqual(['message', 'tool_call', 'tool_result']);
  });

  it("keeps a failing tool's error result without its writes, and the other calls' writes", async () => {
    const { store, phase } = await countingStore();
    let runs = 0;
    const failing = defineTool({
      name: 'transition_state',
      description: 'a database-only stand-in that writes, then throws',
      schema: z.object({}),
      databaseOnly: true,
      async execute(_args, context) {
        runs += 1;
        await store.events.record({
          participantId: context.participantId,
          type: 'stand-in-write',
          data: {},
          createdAt: new Date(),
        });
        throw new Error('half-way failure');
      },
    });
    let exchangeTransactions = -1;
    harness = await createEngineHarness({
      store,
      extraTools: [failing],
      script: [
        () => {
          phase.counting = true;
          return {
            toolCalls: [
              { name: 'save_user_profile', arguments: { habit_domain: 'movement' } },
              { name: 'transition_state', arguments: {} },
            ],
          };
        },
        () => {
          exchangeTransactions = phase.transactions;
          phase.counting = false;
          return { content: 'Saved.' };
        },
      ],
    });
    await harness.send('I want to move more');
    const entries = await store.transcript.list(harness.participant.id);
    expect(entries.map((entry) => entry.kind)).toEqual(['message', 'tool_call', 'tool_result', 'tool_result']);
    const failedResult = JSON.parse(entries[3]?.content ?? '{}') as { status?: string };
    expect(failedResult.status).toBe('error');
    // The failing tool ran once; its write went with the rolled-back run, the profile write of the next run stayed.
    expect(runs).toBe(1);
    expect(await store.events.list({ type: 'stand-in-write' })).toHaveLength(0);
    expect((await harness.profile()).habit_domain).toBe('movement');
    const outcomes = (await store.events.list({ type: 'tool-called' })).map((event) => event.data['outcome']);
    expect(outcomes.sort()).toEqual(['error', 'success']);
    expect(exchangeTransactions).toBe(2);
  });
});
