import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createChannelRegistry } from '../../src/channels/channel-registry.ts';
import { adaptForChannel, createDeliveryHandler, DELIVER_MESSAGE_JOB } from '../../src/channels/delivery-handler.ts';
import { createDeliveryReceipts } from '../../src/channels/delivery-receipts.ts';
import { createOutboxMessenger } from '../../src/channels/outbox-messenger.ts';
import { createRecordingChannel, type RecordingChannel } from '../../src/channels/recording-channel.ts';
import { createWebhookChannel } from '../../src/channels/webhook/webhook-channel.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import type { Messenger } from '../../src/engine/messenger.ts';
import { silentLog } from '../../src/observability/log.ts';
import { createMetrics, type Metrics } from '../../src/observability/metrics.ts';
import { createManualClock, type ManualClock } from '../../src/scheduling/clock.ts';
import type { JobRunner } from '../../src/scheduling/job-runner.ts';
import { createJobRunner } from '../../src/scheduling/job-runner-service.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';

const START = new Date('2026-03-02T14:00:00.000Z');
const PARTICIPANT = {
  id: 'conv_1',
  phoneNumber: '+15551230001',
  name: '',
  gender: '',
  ethnicity: '',
  background: '',
  timezone: '',
  channel: '',
  status: 'active' as const,
  enrolledAt: START,
  createdAt: START,
  updatedAt: START,
};

let store: Store;
let clock: ManualClock;
let runner: JobRunner;
let messenger: Messenger;
let metrics: Metrics;

beforeEach(async () => {
  store = await createSqliteStore({ filename: ':memory:' });
  clock = createManualClock(START);
  metrics = createMetrics();
  runner = createJobRunner({ store, clock, lock: createInProcessLock(), log: silentLog });
  messenger = createOutboxMessenger({ store, clock, newId: sequentialIds() });
  await store.participants.create(PARTICIPANT);
});
afterEach(async () => {
  await runner.stop();
  await store.close();
});

function useChannel(
  channel: RecordingChannel | ReturnType<typeof createWebhookChannel>,
  durable?: () => Promise<void>,
): void {
  // As in src/main.ts: under the participant lock, so one participant's messages go out one at a time, in order.
  runner.register(
    DELIVER_MESSAGE_JOB,
    createDeliveryHandler({
      channels: createChannelRegistry([channel]),
      metrics,
      log: silentLog,
      receipts: createDeliveryReceipts({ store, clock, metrics, log: silentLog }),
      ...(durable ? { durable } : {}),
    }),
  );
}

describe('the deliver_message handler', () => {
  it('delivers outbox messages through the channel, in order', async () => {
    const channel = createRecordingChannel();
    useChannel(channel);
    await messenger.send(PARTICIPANT.id, { type: 'text', text: 'first' }, { kind: 'reply' });
    await messenger.send(
      PARTICIPANT.id,
      { type: 'poll', question: 'Did you do it?', options: ['Done', 'Next time'] },
      { kind: 'poll' },
    );
    expect(await runner.runDue()).toBe(2);
    expect(channel.delivered.map((message) => [message.kind, message.text])).toEqual([
      ['text', 'first'],
      ['poll', 'Did you do it?'],
    ]);
    expect(channel.delivered[1]?.poll?.options).toEqual(['Done', 'Next time']);
    expect(await metrics.registry.getSingleMetricAsString('promptpipe_outbound_messages_total')).toContain(
      'promptpipe_outbound_messages_total{channel="recording",outcome="delivered"} 2',
    );
  });

  it('hands a message that can go now straight to a started runner, in order, never one rolled back', async () => {
    const channel = createRecordingChannel();
    useChannel(channel);
    let claims = 0;
    const claimDue = store.jobs.claimDue.bind(store.jobs);
    store.jobs.claimDue = (options) => {
      claims += 1;
      return claimDue(options);
    };
    const handingOff = createOutboxMessenger({
      store,
      clock,
      newId: sequentialIds(),
      handOff: runner,
      onEnqueued: () => runner.notify(),
    });
    runner.start();
    // The loop's first look at the (empty) queue.
    await vi.waitFor(() => expect(claims).toBe(1), { timeout: 5000 });

    await expect(
      store.transaction(async () => {
        await handingOff.send(PARTICIPANT.id, { type: 'text', text: 'never sent' }, { kind: 'reply' });
        throw new Error('rolled back on purpose');
      }),
    ).rejects.toThrow('rolled back on purpose');
    await handingOff.send(PARTICIPANT.id, { type: 'text', text: 'first' }, { kind: 'reply' });
    // Queued behind the first (still running or just finished), then claimed.
    await handingOff.send(
      PARTICIPANT.id,
      { type: 'poll', question: 'Did you do it?', options: ['Done'] },
      { kind: 'poll' },
    );

    await vi.waitFor(() => expect(channel.delivered).toHaveLength(2), { timeout: 5000 });
    expect(channel.delivered.map((message) => message.text)).toEqual(['first', 'Did you do it?']);
    // The first went without a claim; at most one more claim took the poll.
    expect(claims).toBeLessThanOrEqual(2);
    await runner.stop();
    expect(await store.jobs.listPending()).toEqual([]);
    expect((await store.transcript.list(PARTICIPANT.id)).map((entry) => entry.content)).not.toContain('never sent');
  });

  it('makes the commits durable before handing a message to the channel (group commit)', async () => {
    const steps: string[] = [];
    const channel = createRecordingChannel();
    const send = channel.send.bind(channel);
    channel.send = async (message) => {
      steps.push(`send ${message.text}`);
      return send(message);
    };
    useChannel(channel, async () => {
      steps.push('durable');
    });
    await messenger.send(PARTICIPANT.id, { type: 'text', text: 'first' }, { kind: 'reply' });
    await messenger.send(PARTICIPANT.id, { type: 'text', text: 'second' }, { kind: 'reply' });
    expect(await runner.runDue()).toBe(2);
    expect(steps).toEqual(['durable', 'send first', 'durable', 'send second']);
  });

  it('sends nothing, and counts no failed delivery, when the sync fails: the job is retried', async () => {
    const channel = createRecordingChannel();
    let failing = true;
    useChannel(channel, async () => {
      if (failing) throw new Error('EIO: the disk failed');
    });
    await messenger.send(PARTICIPANT.id, { type: 'text', text: 'kept' }, { kind: 'reply' });
    await runner.runDue();
    expect(channel.attempts).toEqual([]);
    expect(await metrics.registry.getSingleMetricAsString('promptpipe_outbound_messages_total')).not.toContain(
      'outcome="failed"',
    );
    failing = false;
    clock.advance(10 * 60_000);
    expect(await runner.runDue()).toBe(1);
    expect(channel.attempts.map((message) => message.text)).toEqual(['kept']);
    expect(channel.delivered.map((message) => message.text)).toEqual(['kept']);
  });

  it('records the receipt in the transaction that completes the delivery job, and loses neither to a failed commit', async () => {
    const channel = createRecordingChannel();
    useChannel(channel);
    const sent = await messenger.send(PARTICIPANT.id, { type: 'text', text: 'hello' }, { kind: 'reply' });
    // The first completion fails inside its transaction: the receipt written just before it is rolled back too.
    let failures = 1;
    let jobId = '';
    const { jobs } = store;
    Object.assign(store, {
      jobs: {
        ...jobs,
        async complete(id: string, now: Date) {
          jobId = id;
          if (failures > 0) {
            failures -= 1;
            throw new Error('database is locked');
          }
          return jobs.complete(id, now);
        },
      },
    });
    await runner.runDue();
    expect(channel.delivered.map((message) => message.id)).toEqual([sent.id]);
    expect(await store.deliveries.listFor(sent.id)).toEqual([]);
    expect((await store.jobs.get(jobId))?.status).toBe('running');

    // Its lease (10 minutes) expires; the run again delivers under the same id (the gateway's idempotency key) and
    // records once.
    clock.advance(11 * 60_000);
    await runner.runDue();
    expect(channel.delivered.map((message) => message.id)).toEqual([sent.id, sent.id]);
    expect((await store.deliveries.listFor(sent.id)).map((record) => record.status)).toEqual(['sent']);
    expect((await store.jobs.get(jobId))?.status).toBe('completed');
  });

  it("keeps one participant's messages in order even when the gateway is slow to accept the first", async () => {
    const arrivals: string[] = [];
    let active = 0;
    let overlapped = false;
    useChannel({
      name: 'slow',
      supportsPolls: true,
      async send(message) {
        active += 1;
        if (active > 1) overlapped = true;
        if (message.text === 'the prompt') await new Promise((resolve) => setTimeout(resolve, 30));
        arrivals.push(message.text);
        active -= 1;
        return {};
      },
    });
    await messenger.send(PARTICIPANT.id, { type: 'text', text: 'the prompt' }, { kind: 'proactive' });
    await messenger.send(
      PARTICIPANT.id,
      { type: 'poll', question: 'Did you do it?', options: ['Done'] },
      { kind: 'poll' },
    );
    expect(await runner.runDue()).toBe(2);
    expect(arrivals).toEqual(['the prompt', 'Did you do it?']);
    expect(overlapped).toBe(false);
  });

  it('renders a poll as a numbered list for a channel without polls', async () => {
    const channel = createRecordingChannel({ supportsPolls: false });
    useChannel(channel);
    await messenger.send(
      PARTICIPANT.id,
      { type: 'poll', question: "How's the intensity?", options: ['Decrease', 'Keep current', 'Increase'] },
      { kind: 'poll' },
    );
    await runner.runDue();
    expect(channel.delivered).toEqual([
      {
        id: 'out_1',
        participantId: PARTICIPANT.id,
        to: PARTICIPANT.phoneNumber,
        kind: 'text',
        text: "How's the intensity?\nReply 1 for Decrease, 2 for Keep current, 3 for Increase",
      },
    ]);
  });

  it('numbers the options of a run of polls on, however long the run', async () => {
    const channel = createRecordingChannel({ supportsPolls: false });
    useChannel(channel);
    await messenger.send(PARTICIPANT.id, { type: 'text', text: 'the prompt' }, { kind: 'proactive' });
    for (const question of ['First?', 'Second?', 'Third?', 'Fourth?', 'Fifth?']) {
      await messenger.send(PARTICIPANT.id, { type: 'poll', question, options: ['Yes', 'No'] }, { kind: 'poll' });
    }
    await runner.runDue();
    expect(channel.delivered.map((message) => message.text.split('\n')[1] ?? '')).toEqual([
      '',
      'Reply 1 for Yes, 2 for No',
      'Reply 3 for Yes, 4 for No',
      'Reply 5 for Yes, 6 for No',
      'Reply 7 for Yes, 8 for No',
      'Reply 9 for Yes, 10 for No',
    ]);
  });

  it('retries a failed delivery with back-off, keeping the same outbound id', async () => {
    const channel = createRecordingChannel();
    channel.failNext = 2;
    useChannel(channel);
    await messenger.send(PARTICIPANT.id, { type: 'text', text: 'persistent' }, { kind: 'reply' });
    await runner.advanceTo(new Date(START.getTime() + 10 * 60_000));
    expect(channel.attempts.map((message) => message.id)).toEqual(['out_1', 'out_1', 'out_1']);
    expect(channel.delivered.map((message) => message.text)).toEqual(['persistent']);
    const [job] = (await store.jobs.listPending()).filter((pending) => pending.kind === DELIVER_MESSAGE_JOB);
    expect(job).toBeUndefined();
  });

  it('delivers to a real HTTP gateway and retries on a non-2xx answer', async () => {
    const receiver: HttpReceiver = await startHttpReceiver();
    try {
      receiver.respond = (_request, index) => ({ status: index === 0 ? 502 : 200 });
      useChannel(createWebhookChannel({ url: receiver.url, secret: 'k', timeoutMs: 2000, log: silentLog }));
      await messenger.send(PARTICIPANT.id, { type: 'text', text: 'over HTTP' }, { kind: 'reply' });
      await runner.advanceTo(new Date(START.getTime() + 5 * 60_000));
      expect(receiver.requests.map((request) => JSON.parse(request.body).id)).toEqual(['out_1', 'out_1']);
      expect(await metrics.registry.getSingleMetricAsString('promptpipe_outbound_messages_total')).toContain(
        'outcome="failed"} 1',
      );
    } finally {
      await receiver.close();
    }
  });

  it('records a message the webhook channel without a URL only recorded as not delivered, with the reason', async () => {
    useChannel(createWebhookChannel({ url: undefined, secret: undefined, timeoutMs: 2000, log: silentLog }));
    const sent = await messenger.send(PARTICIPANT.id, { type: 'text', text: 'nowhere' }, { kind: 'reply' });
    expect(await runner.runDue()).toBe(1);
    expect(await store.deliveries.listFor(sent.id)).toEqual([
      expect.objectContaining({
        status: 'not_delivered',
        errorMessage: 'PROMPTPIPE_WEBHOOK_URL is not set: the message is only recorded, not sent',
      }),
    ]);
    const attempts = await metrics.registry.getSingleMetricAsString('promptpipe_outbound_messages_total');
    expect(attempts).toContain('promptpipe_outbound_messages_total{channel="webhook",outcome="not_delivered"} 1');
    expect(attempts).not.toContain('outcome="delivered"');
  });
});

describe('adaptForChannel', () => {
  it('leaves text and polls on poll-capable channels unchanged', () => {
    const poll = {
      id: 'out_1',
      participantId: 'p',
      to: '+1',
      kind: 'poll' as const,
      text: 'Q?',
      poll: { id: 'out_1', question: 'Q?', options: ['A', 'B'] },
    };
    expect(adaptForChannel(poll, { supportsPolls: true })).toBe(poll);
    const text = { id: 'out_2', participantId: 'p', to: '+1', kind: 'text' as const, text: 'hi' };
    expect(adaptForChannel(text, { supportsPolls: false })).toBe(text);
  });
});
