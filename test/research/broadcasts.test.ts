import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../support/wait-until.ts';
import { startStudyApp } from './study-fixture.ts';

let started: Awaited<ReturnType<typeof startStudyApp>>;
const ids: string[] = [];
beforeEach(async () => {
  started = await startStudyApp({ BROADCAST_RATE: '1' });
  ids.length = 0;
  for (const phone of ['+15550200001', '+15550200002', '+15550200003', '+15550200004']) {
    ids.push((await started.app.participants.enroll({ phoneNumber: phone }, { greet: false })).id);
  }
  // One opted out before the broadcast, one paused.
  await started.app.participants.update(ids[3] as string, { status: 'withdrawn' });
  await started.app.participants.update(ids[2] as string, { status: 'paused' });
});
afterEach(async () => {
  await started.app.stop();
  await started.model.close();
});

const post = async (payload: object) =>
  started.app.server.inject({ method: 'POST', url: '/conversation/broadcasts', payload });
const progress = async (id: string) =>
  (await started.app.server.inject({ method: 'GET', url: `/conversation/broadcasts/${id}` })).json().result;

describe('broadcasts', () => {
  it('dry run lists the recipients: active by default, never the withdrawn', async () => {
    const response = await post({ text: 'Hello', dry_run: true });
    expect(response.statusCode).toBe(200);
    expect(response.json().result).toMatchObject({
      dry_run: true,
      recipients: 2,
      participant_ids: [ids[0], ids[1]].sort(),
    });
    const withStatus = (await post({ text: 'Hello', dry_run: true, status: ['active', 'paused', 'withdrawn'] })).json();
    expect(withStatus.result.recipients).toBe(3);
    expect(withStatus.result.excluded_withdrawn).toBe(1);
    const otherChannel = (await post({ text: 'Hello', dry_run: true, channel: 'whatsapp' })).json();
    expect(otherChannel.result.recipients).toBe(0);
  });

  it('paces the messages, records them in each transcript and skips those who opt out meanwhile', async () => {
    const response = await post({ text: 'Study update: thank you!', status: ['active', 'paused'] });
    expect(response.statusCode).toBe(202);
    const created = response.json().result;
    expect(created).toMatchObject({ recipients: 3, queued: 3, sent: 0, failed: 0, rate_per_minute: 1 });
    const recipientsInOrder = (await started.app.store.research.jobsPage({}, undefined, 100))
      .filter((job) => job.kind === 'broadcast_message')
      .sort((a, b) => a.runAt.getTime() - b.runAt.getTime())
      .map((job) => [job.participantId, job.runAt.toISOString()]);
    // One per minute.
    expect(recipientsInOrder.map(([, at]) => at)).toEqual([
      '2026-03-02T14:00:00.000Z',
      '2026-03-02T14:01:00.000Z',
      '2026-03-02T14:02:00.000Z',
    ]);
    await waitUntil('the first message delivered', async () => (await progress(created.id)).sent === 1);
    expect(await progress(created.id)).toMatchObject({ queued: 2, sent: 1, failed: 0, skipped: 0 });

    // The third recipient opts out before their slot.
    const third = recipientsInOrder[2]?.[0] as string;
    await started.app.participants.update(third, { status: 'withdrawn' });
    await started.app.runner.advanceTo(new Date('2026-03-02T14:05:00.000Z'));
    await waitUntil('the broadcast finished', async () => (await progress(created.id)).queued === 0);
    expect(await progress(created.id)).toMatchObject({ recipients: 3, queued: 0, sent: 2, failed: 0, skipped: 1 });

    for (const [participantId] of recipientsInOrder.slice(0, 2)) {
      const history = (
        await started.app.server.inject({ method: 'GET', url: `/conversation/participants/${participantId}/history` })
      ).json().result;
      expect(history).toContainEqual(
        expect.objectContaining({ kind: 'organiser', module: 'broadcast', content: 'Study update: thank you!' }),
      );
    }
    const thirdHistory = await started.app.store.transcript.list(third);
    expect(thirdHistory.some((entry) => entry.module === 'broadcast')).toBe(false);
    expect(
      (await started.app.store.transcript.list(ids[3] as string)).some((entry) => entry.module === 'broadcast'),
    ).toBe(false);
  });

  it('rejects bad input and unknown ids', async () => {
    expect((await post({ text: '' })).statusCode).toBe(400);
    expect((await post({ text: 'x', status: ['sleeping'] })).statusCode).toBe(400);
    const missing = await started.app.server.inject({ method: 'GET', url: '/conversation/broadcasts/bc_nope' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().status).toBe('error');
  });
});
