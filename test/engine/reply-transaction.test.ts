import { afterEach, describe, expect, it } from 'vitest';
import { createOutboxMessenger } from '../../src/channels/outbox-messenger.ts';
import { ConversationState } from '../../src/domain/conversation-state.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import type { Log } from '../../src/domain/log.ts';
import { newFlowState } from '../../src/domain/participant-data.ts';
import { createConversationFlow } from '../../src/engine/conversation-flow-service.ts';
import { readHistory } from '../../src/engine/conversation-history.ts';
import { createFeedbackModule } from '../../src/engine/modules/feedback-module.ts';
import { createIntakeModule } from '../../src/engine/modules/intake-module.ts';
import { loadSystemPrompts } from '../../src/engine/system-prompts.ts';
import { createToolRegistry } from '../../src/engine/tool-registry.ts';
import { createFakeLlm } from '../../src/llm/fake-llm.ts';
import { createManualClock } from '../../src/scheduling/clock.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { insideUnitOfWork } from '../../src/store/unit-of-work.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const START = new Date('2026-03-02T14:00:00.000Z');
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

/**
 * The engine with the production outbox messenger on `store`; `transactionsAfterModel` counts the transactions begun
 * after the model answered, and `failHistory` makes every working-history save fail from then on.
 */
async function outboxEngine() {
  const real = await createSqliteStore({ filename: ':memory:' });
  stores.push(real);
  const state = { modelAnswered: false, transactionsAfterModel: 0, failHistory: false };
  const store: Store = {
    ...real,
    history: {
      ...real.history,
      async append(participantId, firstSeq, messages) {
        const answer = messages.some((message) => message.includes('Here is my answer.'));
        if (state.failHistory && answer) throw new Error('disk full');
        return real.history.append(participantId, firstSeq, messages);
      },
    },
    transaction: (fn) => {
      // A call inside a unit of work joins it: only the others begin a transaction.
      if (state.modelAnswered && !insideUnitOfWork()) state.transactionsAfterModel += 1;
      return real.transaction(() => fn(store));
    },
  };
  const errors: string[] = [];
  const log: Log = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (_fields, message) => errors.push(message),
  };
  const clock = createManualClock(START);
  const prompts = loadSystemPrompts({});
  const llm = createFakeLlm([
    () => {
      state.modelAnswered = true;
      return { content: 'Here is my answer.' };
    },
  ]);
  const flow = createConversationFlow({
    store,
    llm,
    registry: createToolRegistry([]),
    messenger: createOutboxMessenger({ store, clock, newId: sequentialIds() }),
    clock,
    lock: createInProcessLock(),
    modules: {
      [ConversationState.INTAKE]: createIntakeModule(prompts.intake),
      [ConversationState.FEEDBACK]: createFeedbackModule(prompts.feedback),
    },
    config: { chatHistoryLimit: -1, debug: false },
    log,
  });
  await real.participants.create(participantFixture('p_1', '+15551230001', START));
  await real.flowStates.save(newFlowState('p_1', START));
  const turn = (withReply?: () => Promise<void>) =>
    flow.handleMessage({
      participantId: 'p_1',
      text: 'hello',
      sourceMessageId: 'in_1',
      receivedAt: START,
      ...(withReply ? { withReply } : {}),
    });
  return { real, state, errors, turn };
}

describe('the reply and its working-history entry', () => {
  it('commit in one transaction: the reply, its delivery job and the history entry', async () => {
    const engine = await outboxEngine();
    expect((await engine.turn()).reply).toBe('Here is my answer.');
    expect(engine.state.transactionsAfterModel).toBe(1);
    const replies = (await engine.real.transcript.list('p_1')).filter((entry) => entry.kind === 'reply');
    expect(replies.map((entry) => entry.content)).toEqual(['Here is my answer.']);
    expect(await engine.real.jobs.claimDue({ now: START, owner: 'test', leaseMs: 60_000, limit: 10 })).toHaveLength(1);
    expect((await readHistory(engine.real, 'p_1')).map((message) => message.content)).toEqual([
      'hello',
      'Here is my answer.',
    ]);
  });

  it('when the history cannot be saved, the reply still goes, once, and the failure is logged (specification, scenario 10)', async () => {
    const engine = await outboxEngine();
    engine.state.failHistory = true;
    expect((await engine.turn()).reply).toBe('Here is my answer.');
    const replies = (await engine.real.transcript.list('p_1')).filter((entry) => entry.kind === 'reply');
    expect(replies.map((entry) => entry.content)).toEqual(['Here is my answer.']);
    const jobs = await engine.real.jobs.claimDue({ now: START, owner: 'test', leaseMs: 60_000, limit: 10 });
    expect(jobs.map((job) => (job.payload as { message: { text: string } }).message.text)).toEqual([
      'Here is my answer.',
    ]);
    expect((await readHistory(engine.real, 'p_1')).map((message) => message.content)).toEqual(['hello']);
    expect(engine.errors).toContain('saving conversation history failed');
  });

  it("makes the caller's writes that belong with the reply in the same transaction, or after it when it went alone", async () => {
    const withReply = (label: string, store: Store) => async () => {
      await store.events.record({ participantId: 'p_1', type: 'answered', data: { label }, createdAt: START });
    };
    const together = await outboxEngine();
    await together.turn(withReply('together', together.real));
    expect(together.state.transactionsAfterModel).toBe(1);
    expect((await together.real.events.list({ type: 'answered' })).map((event) => event.data)).toEqual([
      { label: 'together' },
    ]);

    const alone = await outboxEngine();
    alone.state.failHistory = true;
    await alone.turn(withReply('after the lone reply', alone.real));
    expect((await alone.real.events.list({ type: 'answered' })).map((event) => event.data)).toEqual([
      { label: 'after the lone reply' },
    ]);
  });
});
