import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../src/domain/data-keys.ts';
import { readData, readProfile, writeData, writeProfile } from '../../src/domain/participant-data.ts';
import { DONE_POLL } from '../../src/domain/polls.ts';
import { createProfile } from '../../src/domain/profile.ts';
import { readHistory } from '../../src/engine/conversation-history.ts';
import { createRecordingMessenger, type RecordingMessenger } from '../../src/engine/recording-messenger.ts';
import type { AfterPromptSentHook, PromptSentEvent } from '../../src/scheduling/daily-prompt-hooks.ts';
import { DAILY_PROMPT_JOB } from '../../src/scheduling/daily-prompt-jobs.ts';
import { parseScheduleRegistry } from '../../src/scheduling/schedule-registry.ts';
import type { Store } from '../../src/store/store.ts';
import { createDeliveryHarness, type DeliveryHarness } from './daily-prompt-harness.ts';
import { createMemoryStore, hours, minutes } from './scheduling-fixtures.ts';

const INTENSITY_POLL = {
  type: 'poll' as const,
  question: "How's the intensity?",
  options: ['Decrease', 'Keep current', 'Increase'],
};

// Monday 2 March 2026, 07:00 in Toronto (EST, UTC−5). A 09:00 schedule sends at 08:50 = 13:50Z.
const START = new Date('2026-03-02T12:00:00Z');
const FIRST_SEND = new Date('2026-03-02T13:50:00Z');
const SECOND_SEND = new Date('2026-03-03T13:50:00Z');

let harness: DeliveryHarness | undefined;
afterEach(async () => {
  await harness?.store.close();
  harness = undefined;
});

async function scheduledAtNine(options: Omit<Parameters<typeof createDeliveryHarness>[0], 'start'> = {}) {
  harness = await createDeliveryHarness({ start: START, ...options });
  await harness.schedule({ action: 'create', type: 'fixed', fixed_time: '09:00' });
  return harness;
}

async function pendingDailyPrompts(store: Store) {
  return store.jobs.listPending({ participantId: 'p_1', kind: DAILY_PROMPT_JOB });
}

describe('delivering the daily prompt', () => {
  it('sends the prompt, then the Done poll, records it, and arms the next day', async () => {
    const { store, runner, messenger, generator } = await scheduledAtNine();

    await runner.advanceTo(new Date(FIRST_SEND.getTime() + minutes(30)));

    expect(generator.calls).toEqual([{ participantId: 'p_1', deliveryMode: 'scheduled' }]);
    expect(messenger.sent.map((sent) => [sent.message, sent.options])).toEqual([
      [
        { type: 'text', text: 'After your coffee, take a 10-minute walk.' },
        { kind: 'proactive', module: 'scheduler' },
      ],
      [
        { type: 'poll', question: 'Did you do it?', options: ['Done', 'Next time'] },
        { kind: 'poll', module: 'scheduler' },
      ],
    ]);
    const data = await readData(store, 'p_1');
    expect(data[DataKey.lastPromptSentAt]).toBe(FIRST_SEND.toISOString());
    expect((await readProfile(store, 'p_1', START)).total_prompts).toBe(1);
    expect(await readHistory(store, 'p_1')).toEqual([
      { role: 'assistant', content: 'After your coffee, take a 10-minute walk.', timestamp: FIRST_SEND.toISOString() },
    ]);

    const [next] = await pendingDailyPrompts(store);
    expect(next).toMatchObject({ runAt: SECOND_SEND, payload: { local_date: '2026-03-03' } });
    const [schedule] = parseScheduleRegistry(data[DataKey.scheduleRegistry]);
    expect(schedule?.timer_id).toBe(next?.id);
    const [event] = await store.events.list({ type: 'prompt-sent' });
    expect(event?.data).toMatchObject({ fallback: false, late_ms: 0, next_prompt_at: SECOND_SEND.toISOString() });
  });

  it('runs the afterPromptSent hook in the delivery transaction and sends its follow-ups after the Done poll', async () => {
    const seen: PromptSentEvent[] = [];
    // The hook writes through the store it was made with (the harness's, made with it).
    const hookStore = await createMemoryStore();
    const afterPromptSent: AfterPromptSentHook = async (event) => {
      seen.push(event);
      await writeData(
        hookStore,
        event.participantId,
        { [DataKey.lastIntensityPromptDate]: '2026-03-02' },
        event.sentAt,
      );
      return [
        {
          participantId: event.participantId,
          message: {
            type: 'poll',
            question: "How's the intensity?",
            options: ['Decrease', 'Keep current', 'Increase'],
          },
          options: { kind: 'poll', module: 'scheduler' },
        },
      ];
    };
    const { store, runner, messenger } = await scheduledAtNine({ store: hookStore, afterPromptSent });

    await runner.advanceTo(new Date(FIRST_SEND.getTime() + minutes(1)));

    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ participantId: 'p_1', sentAt: FIRST_SEND, fallback: false });
    expect(messenger.textsFor('p_1')).toEqual([
      'After your coffee, take a 10-minute walk.',
      DONE_POLL.question,
      "How's the intensity?",
    ]);
    expect((await readData(store, 'p_1'))[DataKey.lastIntensityPromptDate]).toBe('2026-03-02');
  });

  it('sends neither the prompt nor its poll when the day’s bookkeeping fails: they commit together', async () => {
    let failing = true;
    const afterPromptSent: AfterPromptSentHook = async () => {
      if (failing) throw new Error('database is locked');
      return [];
    };
    const { runner, messenger } = await scheduledAtNine({ afterPromptSent });

    await runner.advanceTo(new Date(FIRST_SEND.getTime() + minutes(1)));
    expect(messenger.textsFor('p_1')).toEqual([]);

    // The job is retried with back-off and then delivers both, once.
    failing = false;
    await runner.advanceTo(new Date(FIRST_SEND.getTime() + minutes(10)));
    expect(messenger.textsFor('p_1')).toEqual(['After your coffee, take a 10-minute walk.', DONE_POLL.question]);
  });

  it('commits the hook’s follow-ups with the prompt: when one cannot be recorded, nothing of the day is sent', async () => {
    const recording = createRecordingMessenger();
    let failing = true;
    const messenger: RecordingMessenger = {
      ...recording,
      async send(participantId, message, options) {
        if (failing && message.type === 'poll' && message.question === INTENSITY_POLL.question) {
          throw new Error('database is locked');
        }
        return recording.send(participantId, message, options);
      },
    };
    const hookStore = await createMemoryStore();
    const afterPromptSent: AfterPromptSentHook = async (event) => {
      await writeData(
        hookStore,
        event.participantId,
        { [DataKey.lastIntensityPromptDate]: '2026-03-02' },
        event.sentAt,
      );
      return [{ participantId: event.participantId, message: INTENSITY_POLL, options: { kind: 'poll' } }];
    };
    const { store, runner } = await scheduledAtNine({ store: hookStore, afterPromptSent, messenger });

    await runner.advanceTo(new Date(FIRST_SEND.getTime() + minutes(1)));
    // Not the prompt without its intensity poll: the day's transaction rolled back as a whole.
    expect(messenger.textsFor('p_1')).toEqual([]);
    expect((await readData(store, 'p_1'))[DataKey.lastIntensityPromptDate]).toBeUndefined();
    expect(await store.events.list({ type: 'prompt-sent' })).toEqual([]);

    // The job is retried with back-off and then delivers all three, once.
    failing = false;
    await runner.advanceTo(new Date(FIRST_SEND.getTime() + minutes(10)));
    expect(messenger.textsFor('p_1')).toEqual([
      'After your coffee, take a 10-minute walk.',
      DONE_POLL.question,
      INTENSITY_POLL.question,
    ]);
    expect(await store.events.list({ type: 'prompt-sent' })).toHaveLength(1);
  });

  it('keeps the generator’s record only with the prompt it made: a failed day keeps none, its re-run one', async () => {
    let failing = true;
    const afterPromptSent: AfterPromptSentHook = async () => {
      if (failing) throw new Error('database is locked');
      return [];
    };
    // The record writes through the generator's store (here the scheduler's, known once it is made).
    const generatorStore: { current?: Store } = {};
    const generated = {
      ok: true as const,
      prompt: 'After your coffee, take a 10-minute walk.',
      warnings: [],
      record: async () => {
        await generatorStore.current?.events.record({
          participantId: 'p_1',
          type: 'habit-prompt-generated',
          data: {},
          createdAt: FIRST_SEND,
        });
      },
    };
    const { store, runner, generator } = await scheduledAtNine({ afterPromptSent, prompts: [generated] });
    generatorStore.current = store;

    await runner.advanceTo(new Date(FIRST_SEND.getTime() + minutes(1)));
    const failedRuns = generator.calls.length;
    expect(failedRuns).toBeGreaterThan(0);
    expect(await store.events.list({ type: 'habit-prompt-generated' })).toEqual([]);

    failing = false;
    await runner.advanceTo(new Date(FIRST_SEND.getTime() + minutes(10)));
    expect(generator.calls).toHaveLength(failedRuns + 1);
    expect(await store.events.list({ type: 'habit-prompt-generated' })).toHaveLength(1);
    expect(await store.events.list({ type: 'prompt-sent' })).toHaveLength(1);
  });

  it('sends a fallback built from the anchor when the generator fails, and records the failure', async () => {
    const { store, runner, messenger } = await scheduledAtNine({
      prompts: [{ ok: false, error: 'The prompt generator is unavailable: timeout', missing: [] }],
    });
    await writeProfile(
      store,
      'p_1',
      { ...createProfile(START), prompt_anchor: 'my morning coffee', habit_domain: 'walking' },
      START,
    );

    await runner.advanceTo(new Date(FIRST_SEND.getTime() + minutes(1)));

    const fallback =
      'Time for your walking habit: right after my morning coffee, take one small step today. Even a tiny version counts!';
    expect(messenger.textsFor('p_1')).toEqual([fallback, DONE_POLL.question]);
    const data = await readData(store, 'p_1');
    expect(data[DataKey.lastHabitPrompt]).toBe(fallback);
    expect((await readProfile(store, 'p_1', START)).total_prompts).toBe(1);
    const [failure] = await store.events.list({ type: 'prompt-generation-failed' });
    expect(failure?.data).toMatchObject({ error: 'The prompt generator is unavailable: timeout', used_fallback: true });
    expect((await store.events.list({ type: 'prompt-sent' }))[0]?.data).toMatchObject({ fallback: true });
  });

  it('sends a generic fallback when the generator throws and there is no profile', async () => {
    const { runner, messenger } = await scheduledAtNine({ prompts: [new Error('socket hang up')] });
    await runner.advanceTo(new Date(FIRST_SEND.getTime() + minutes(1)));
    expect(messenger.textsFor('p_1')).toEqual([
      'Time for your habit! Take one small step today. Even a tiny version counts!',
      DONE_POLL.question,
    ]);
  });
});

describe('preconditions', () => {
  it('delivers a prompt that is late but within the grace period', async () => {
    const { runner, clock, messenger, store } = await scheduledAtNine();
    clock.set(new Date(FIRST_SEND.getTime() + minutes(45)));
    await runner.runDue();
    expect(messenger.textsFor('p_1')).toHaveLength(2);
    expect((await store.events.list({ type: 'prompt-sent' }))[0]?.data).toMatchObject({ late_ms: minutes(45) });
  });

  it('skips a prompt more than the grace period late, records it, and arms the next day', async () => {
    const { runner, clock, messenger, store, generator } = await scheduledAtNine();
    // The server was down from before 08:50 until 11:00.
    clock.set(new Date(FIRST_SEND.getTime() + hours(2) + minutes(10)));
    await runner.runDue();

    expect(messenger.sent).toEqual([]);
    expect(generator.calls).toEqual([]);
    const [skipped] = await store.events.list({ type: 'prompt-skipped' });
    expect(skipped?.data).toMatchObject({
      reason: 'missed-grace',
      local_date: '2026-03-02',
      late_ms: hours(2) + minutes(10),
      next_prompt_at: SECOND_SEND.toISOString(),
    });
    expect((await pendingDailyPrompts(store)).map((job) => job.runAt)).toEqual([SECOND_SEND]);
    expect((await readProfile(store, 'p_1', START)).total_prompts).toBe(0);
  });

  it('after an outage of several days, skips once and resumes on the next future day', async () => {
    const { runner, clock, store } = await scheduledAtNine();
    clock.set(new Date('2026-03-05T15:00:00Z'));
    await runner.runDue();
    expect(await store.events.list({ type: 'prompt-skipped' })).toHaveLength(1);
    expect((await pendingDailyPrompts(store)).map((job) => job.runAt)).toEqual([new Date('2026-03-06T13:50:00Z')]);
  });

  it('sends nothing to a paused participant and leaves no next job', async () => {
    const { runner, messenger, store, generator } = await scheduledAtNine();
    await store.participants.update('p_1', { status: 'paused', updatedAt: START });

    await runner.advanceTo(new Date(FIRST_SEND.getTime() + hours(1)));

    expect(messenger.sent).toEqual([]);
    expect(generator.calls).toEqual([]);
    expect(await pendingDailyPrompts(store)).toEqual([]);
  });

  it('skips the day when the delivery guard declines (e.g. idle and IDLE_PAUSES_PROMPTS)', async () => {
    const { runner, messenger, store } = await scheduledAtNine({
      deliveryGuard: async () => ({ deliver: false, reason: 'participant-idle' }),
    });
    await runner.advanceTo(new Date(FIRST_SEND.getTime() + minutes(5)));
    expect(messenger.sent).toEqual([]);
    expect((await store.events.list({ type: 'prompt-skipped' }))[0]?.data).toMatchObject({
      reason: 'participant-idle',
    });
    expect((await pendingDailyPrompts(store)).map((job) => job.runAt)).toEqual([SECOND_SEND]);
  });

  it('does nothing when the job is run again after its delivery committed (a crash before completion)', async () => {
    const { clock, store, messenger, handler } = await scheduledAtNine();
    const [job] = await pendingDailyPrompts(store);
    if (!job) throw new Error('expected a pending daily prompt');
    clock.set(FIRST_SEND);

    await handler(job);
    await handler(job);

    expect(messenger.textsFor('p_1')).toEqual(['After your coffee, take a 10-minute walk.', DONE_POLL.question]);
    expect((await readProfile(store, 'p_1', START)).total_prompts).toBe(1);
  });

  it('does nothing for a job whose schedule was deleted', async () => {
    const { clock, store, messenger, handler, schedule } = await scheduledAtNine();
    const [job] = await pendingDailyPrompts(store);
    if (!job) throw new Error('expected a pending daily prompt');
    await schedule({ action: 'delete', schedule_id: job.payload['schedule_id'] });
    clock.set(FIRST_SEND);
    await handler(job);
    expect(messenger.sent).toEqual([]);
  });
});
