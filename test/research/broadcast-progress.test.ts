import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOutboxMessenger } from '../../src/channels/outbox-messenger.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import { createBroadcastHandler, createBroadcastService } from '../../src/research/broadcasts/broadcast-service.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const NOW = new Date('2026-03-02T14:00:00.000Z');
const clock = { now: () => NOW };

/** Progress read between the steps of a recipient's slot, where a count of jobs could see them twice. */
describe('broadcast progress', () => {
  let store: Store;
  beforeEach(async () => {
    store = await createSqliteStore({ filename: ':memory:' });
    for (const [index, phone] of ['+15550300001', '+15550300002', '+15550300003'].entries()) {
      await store.participants.create(participantFixture(`participant_${index + 1}`, phone, NOW));
    }
  });
  afterEach(async () => {
    await store.close();
  });

  it('counts a recipient once while their slot has queued the message but is not yet marked completed', async () => {
    const newId = sequentialIds();
    const service = createBroadcastService({ store, clock, newId, ratePerMinute: 60, defaultChannel: 'webhook' });
    const handler = createBroadcastHandler({ store, clock, messenger: createOutboxMessenger({ store, clock, newId }) });
    const { broadcast } = await service.create({ text: 'Study update' });
    if (!broadcast) throw new Error('no broadcast');
    expect(await service.progress(broadcast.id)).toMatchObject({ queued: 3, sent: 0, failed: 0, skipped: 0 });

    const [slot] = await store.jobs.claimDue({ now: NOW, owner: 'test', leaseMs: 60_000, limit: 1 });
    if (!slot) throw new Error('no slot due');
    // The slot's handler ran (the message is recorded and in the outbox); the slot job itself is still running.
    await handler(slot);
    expect(await service.progress(broadcast.id)).toMatchObject({ queued: 3, sent: 0, failed: 0, skipped: 0 });

    await store.jobs.complete(slot.id, NOW);
    expect(await service.progress(broadcast.id)).toMatchObject({ queued: 3, sent: 0, failed: 0, skipped: 0 });
    const [delivery] = await store.jobs.claimDue({
      now: NOW,
      owner: 'test',
      leaseMs: 60_000,
      limit: 1,
      kinds: ['deliver_message'],
    });
    if (!delivery) throw new Error('no delivery queued');
    await store.jobs.complete(delivery.id, NOW);
    expect(await service.progress(broadcast.id)).toMatchObject({ queued: 2, sent: 1, failed: 0, skipped: 0 });
  });
});
