/**
 * A broadcast goes through the same messenger (one outbox path) as every other outbound message, so each recipient
 * gets it on their own channel: a web-chat participant in the web chat, not on the study's default channel.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createChannelRegistry } from '../../src/channels/channel-registry.ts';
import { createDeliveryHandler, DELIVER_MESSAGE_JOB } from '../../src/channels/delivery-handler.ts';
import { createDeliveryReceipts } from '../../src/channels/delivery-receipts.ts';
import { createOutboxMessenger } from '../../src/channels/outbox-messenger.ts';
import { createRecordingChannel } from '../../src/channels/recording-channel.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import { silentLog } from '../../src/observability/log.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import {
  BROADCAST_MESSAGE_JOB,
  createBroadcastHandler,
  createBroadcastService,
} from '../../src/research/broadcasts/broadcast-service.ts';
import { createManualClock } from '../../src/scheduling/clock.ts';
import type { JobRunner } from '../../src/scheduling/job-runner.ts';
import { createJobRunner } from '../../src/scheduling/job-runner-service.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const START = new Date('2026-03-02T14:00:00.000Z');
let store: Store;
let runner: JobRunner;
let clock: ReturnType<typeof createManualClock>;

beforeEach(async () => {
  store = await createSqliteStore({ filename: ':memory:' });
  clock = createManualClock(START);
  runner = createJobRunner({ store, clock, lock: createInProcessLock(), log: silentLog });
});
afterEach(async () => {
  await runner.stop();
  await store.close();
});

describe('a broadcast on several channels', () => {
  it('reaches each recipient on their own channel, recorded in their transcript and history', async () => {
    const newId = sequentialIds();
    const webhook = createRecordingChannel({ name: 'webhook' });
    const webchat = createRecordingChannel({ name: 'webchat' });
    const metrics = createMetrics();
    const messenger = createOutboxMessenger({ store, clock, newId });
    runner.register(BROADCAST_MESSAGE_JOB, createBroadcastHandler({ store, clock, messenger }));
    runner.register(
      DELIVER_MESSAGE_JOB,
      createDeliveryHandler({
        channels: createChannelRegistry([webhook, webchat]),
        metrics,
        log: silentLog,
        receipts: createDeliveryReceipts({ store, clock, metrics, log: silentLog }),
      }),
    );
    await store.participants.create(participantFixture('p_chat', '+15550400001', START, { channel: 'webchat' }));
    await store.participants.create(participantFixture('p_hook', '+15550400002', START, { channel: 'webhook' }));
    const service = createBroadcastService({ store, clock, newId, ratePerMinute: 600, defaultChannel: 'webhook' });
    const { broadcast } = await service.create({ text: 'Study update' });
    if (!broadcast) throw new Error('no broadcast');

    // The paced slot jobs queue the deliveries, which run as soon as they are due.
    await runner.advanceTo(new Date(START.getTime() + 60_000));

    expect(webchat.delivered.map((message) => [message.to, message.text])).toEqual([['+15550400001', 'Study update']]);
    expect(webhook.delivered.map((message) => [message.to, message.text])).toEqual([['+15550400002', 'Study update']]);
    expect(await service.progress(broadcast.id)).toMatchObject({ sent: 2, failed: 0 });
    const [entry] = (await store.transcript.list('p_chat')).filter((row) => row.module === 'broadcast');
    expect(entry).toMatchObject({ role: 'assistant', kind: 'organiser', content: 'Study update' });
  });
});
