/**
 * The outbox with several channels: each message goes out on its participant's channel, every outcome becomes a
 * delivery record (sent, receipts, failures), a permanent failure is not retried, and the history shows the latest
 * delivery status of each outbound message.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createChannelRegistry } from '../../src/channels/channel-registry.ts';
import { createDeliveryHandler, DELIVER_MESSAGE_JOB } from '../../src/channels/delivery-handler.ts';
import { createDeliveryReceipts, type DeliveryReceipts } from '../../src/channels/delivery-receipts.ts';
import { createOutboxMessenger } from '../../src/channels/outbox-messenger.ts';
import { createRecordingChannel, type RecordingChannel } from '../../src/channels/recording-channel.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import type { Participant } from '../../src/domain/participant.ts';
import type { Messenger } from '../../src/engine/messenger.ts';
import { silentLog } from '../../src/observability/log.ts';
import { createMetrics, type Metrics } from '../../src/observability/metrics.ts';
import { createParticipantService } from '../../src/participants/participant-service.ts';
import { createManualClock, type ManualClock } from '../../src/scheduling/clock.ts';
import type { JobRunner } from '../../src/scheduling/job-runner.ts';
import { createJobRunner } from '../../src/scheduling/job-runner-service.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const START = new Date('2026-03-02T14:00:00.000Z');

function participant(id: string, phoneNumber: string, channel: string): Participant {
  return participantFixture(id, phoneNumber, START, { timezone: '', channel });
}

let store: Store;
let clock: ManualClock;
let runner: JobRunner;
let messenger: Messenger;
let metrics: Metrics;
let receipts: DeliveryReceipts;
let sms: RecordingChannel;
let chat: RecordingChannel;

beforeEach(async () => {
  store = await createSqliteStore({ filename: ':memory:' });
  clock = createManualClock(START);
  metrics = createMetrics();
  runner = createJobRunner({ store, clock, lock: createInProcessLock(), log: silentLog, backoff: () => 1_000 });
  messenger = createOutboxMessenger({ store, clock, newId: sequentialIds() });
  receipts = createDeliveryReceipts({ store, clock, metrics, log: silentLog });
  sms = createRecordingChannel({ name: 'sms', supportsPolls: false });
  chat = createRecordingChannel({ name: 'chat' });
  runner.register(
    DELIVER_MESSAGE_JOB,
    createDeliveryHandler({ channels: createChannelRegistry([chat, sms]), metrics, log: silentLog, receipts }),
  );
  await store.participants.create(participant('p_sms', '+15550000001', 'sms'));
  await store.participants.create(participant('p_chat', '+15550000002', 'chat'));
  await store.participants.create(participant('p_legacy', '+15550000003', ''));
});
afterEach(async () => {
  await runner.stop();
  await store.close();
});

describe('delivery on several channels', () => {
  it("sends each message on its participant's channel (the default one for participants without)", async () => {
    await messenger.send(
      'p_sms',
      { type: 'poll', question: 'Did you do it?', options: ['Done', 'Next time'] },
      {
        kind: 'poll',
      },
    );
    await messenger.send('p_chat', { type: 'text', text: 'hello chat' }, { kind: 'reply' });
    await messenger.send('p_legacy', { type: 'text', text: 'hello default' }, { kind: 'reply' });
    expect(await runner.runDue()).toBe(3);
    expect(sms.delivered.map((message) => [message.to, message.kind, message.text])).toEqual([
      ['+15550000001', 'text', 'Did you do it?\nReply 1 for Done, 2 for Next time'],
    ]);
    expect(chat.delivered.map((message) => [message.to, message.text])).toEqual([
      ['+15550000002', 'hello chat'],
      ['+15550000003', 'hello default'],
    ]);
  });

  it('never sends on the default channel for a channel this server does not run: the delivery fails for good, visibly', async () => {
    await store.participants.create(participant('p_console', '+15550000004', 'console'));
    const sent = await messenger.send('p_console', { type: 'text', text: 'for the terminal' }, { kind: 'reply' });
    await runner.runDue();
    clock.advance(60_000);
    await runner.runDue();
    expect([...chat.attempts, ...sms.attempts]).toEqual([]);
    expect((await store.jobs.listPending({ participantId: 'p_console' })).length).toBe(0);
    const [failure] = await store.deliveries.listFor(sent.id);
    expect(failure).toMatchObject({ status: 'failed', channel: 'console', errorCode: 'channel_not_enabled' });
    expect(failure?.errorMessage).toMatch(/^channel console is not enabled on this server \(enabled: chat, sms\)/);
    const events = await store.events.list({ participantId: 'p_console', type: 'delivery-failed' });
    expect(events.map((event) => event.data)).toEqual([
      expect.objectContaining({ outbound_id: sent.id, channel: 'console', error_code: 'channel_not_enabled' }),
    ]);
    const attempts = await metrics.registry.getSingleMetricAsString('promptpipe_outbound_messages_total');
    expect(attempts).toContain('promptpipe_outbound_messages_total{channel="console",outcome="failed"} 1');
  });

  it('records the sent status with the provider id, then what receipts report', async () => {
    const sent = await messenger.send('p_chat', { type: 'text', text: 'hi' }, { kind: 'reply' });
    await runner.runDue();
    const [record] = await store.deliveries.listFor(sent.id);
    expect(record).toMatchObject({ status: 'sent', channel: 'chat', providerMessageId: `provider_${sent.id}` });

    expect(await receipts.receive({ channel: 'chat', providerMessageId: `provider_${sent.id}`, status: 'read' })).toBe(
      true,
    );
    expect(await receipts.receive({ channel: 'chat', providerMessageId: 'someone-else', status: 'read' })).toBe(false);
    expect((await store.deliveries.latest([sent.id])).get(sent.id)?.status).toBe('read');
    expect(await metrics.registry.getSingleMetricAsString('promptpipe_delivery_status_total')).toContain(
      'promptpipe_delivery_status_total{channel="chat",status="read"} 1',
    );
  });

  it('does not retry a permanent failure: it is recorded with the provider code, as an event and in the history', async () => {
    sms.refuseNext = 1;
    const sent = await messenger.send('p_sms', { type: 'text', text: 'refused' }, { kind: 'reply' });
    await runner.runDue();
    clock.advance(60_000);
    await runner.runDue();
    expect(sms.attempts).toHaveLength(1);
    expect((await store.jobs.listPending({ participantId: 'p_sms' })).length).toBe(0);
    const [failure] = await store.deliveries.listFor(sent.id);
    expect(failure).toMatchObject({ status: 'failed', errorCode: '21610' });
    const events = await store.events.list({ participantId: 'p_sms', type: 'delivery-failed' });
    expect(events.map((event) => event.data)).toEqual([
      expect.objectContaining({ outbound_id: sent.id, channel: 'sms', status: 'failed', error_code: '21610' }),
    ]);

    const participants = createParticipantService({
      store,
      flow: { greet: async () => ({ reply: '', module: 'INTAKE', toolsCalled: [] }) },
      messenger,
      lock: createInProcessLock(),
      clock,
      newId: sequentialIds(),
      log: silentLog,
      defaultCountry: 'US',
      prepTimeMinutes: 10,
    });
    const [entry] = await participants.history('p_sms');
    expect(entry).toMatchObject({ outboundId: sent.id, delivery: { status: 'failed', errorCode: '21610' } });
  });

  it('retries other failures, and records the failure once the attempts are used up', async () => {
    sms.failNext = 100;
    const sent = await messenger.send('p_sms', { type: 'text', text: 'flaky' }, { kind: 'reply' });
    for (let round = 0; round < 10; round += 1) {
      await runner.runDue();
      clock.advance(1_000);
    }
    expect(sms.attempts.length).toBe(8);
    const records = await store.deliveries.listFor(sent.id);
    expect(records.map((record) => record.status)).toEqual(['failed']);
    expect(records[0]?.errorMessage).toMatch(/^gave up after 8 attempts/);
  });
});
