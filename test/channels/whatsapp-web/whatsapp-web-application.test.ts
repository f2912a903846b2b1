/**
 * The whatsapp-web channel inside the composed application (`createApplication`), before the account is linked:
 * the server starts, `/health` says so, outbound messages wait (never fail, never lose attempts, one job row each
 * however long) and all go out as soon as the device is linked.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { phoneToJid } from '../../../src/channels/whatsapp-web/whatsapp-jid.ts';
import { loadConfig } from '../../../src/config.ts';
import { DONE_POLL, INTENSITY_POLL_QUESTION, intensityPollOptions } from '../../../src/domain/polls.ts';
import { type Application, createApplication } from '../../../src/main.ts';
import { createLogger } from '../../../src/observability/log.ts';
import { createSqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import type { Job } from '../../../src/store/store.ts';
import { FakeWhatsApp } from '../../support/fake-whatsapp-socket.ts';
import { linkFakeAccount, startChannel } from './whatsapp-web-harness.ts';

let app: Application | undefined;
const isDelivery = (job: Job): boolean => job.kind === 'deliver_message';
afterEach(async () => {
  await app?.stop();
  app = undefined;
});

describe('whatsapp-web in the application, not linked yet', () => {
  it('starts, reports not_linked on /health, holds the greeting in its one job row for a day, and delivers it once linked', async () => {
    const config = loadConfig({
      PROMPTPIPE_CHANNEL: 'whatsapp-web',
      PROMPTPIPE_CLOCK: 'manual',
      PROMPTPIPE_CLOCK_START: '2026-03-02T14:00:00.000Z',
      LOG_LEVEL: 'silent',
    });
    const store = await createSqliteStore({ filename: ':memory:' });
    const whatsapp = new FakeWhatsApp();
    const channel = startChannel(store, whatsapp, { deliveryHoldMs: 30_000, unlinkedHoldMs: 30_000 });
    app = await createApplication({ config, log: createLogger({ level: 'silent' }), store, channel });
    await app.start();
    await vi.waitFor(() => expect(channel.connectionState()).toBe('not_linked'));

    const health = await app.server.inject({ method: 'GET', url: '/health' });
    expect(health.json()).toMatchObject({ status: 'healthy', channels: { 'whatsapp-web': { state: 'not_linked' } } });

    const participant = await app.participants.enroll({ phoneNumber: '+15550000001' }, { greet: true, source: 'test' });
    await app.runner.runDue();
    const deliveries = async () => (await store.research.jobsPage({}, undefined, 10_000)).filter(isDelivery);
    // The background loop may be the one running the delivery: wait for its outcome, the held job.
    const [held] = await vi.waitFor(async () => {
      const jobs = await deliveries();
      expect(jobs.map((job) => job.status)).toEqual(['pending']);
      return jobs;
    });
    expect(held).toMatchObject({ status: 'pending', attempts: 0, participantId: participant.id });
    expect(held?.runAt.getTime()).toBe(app.clock.now().getTime() + 30_000);
    expect(whatsapp.sent).toEqual([]);

    // A whole simulated day unlinked, looked at every 30 s: still that one row, nothing failed, no attempt spent.
    await app.runner.advanceTo(new Date(app.clock.now().getTime() + 24 * 3_600_000));
    await vi.waitFor(async () => {
      const jobs = await deliveries();
      expect(jobs.map((job) => [job.id, job.status, job.attempts])).toEqual([[held?.id, 'pending', 0]]);
    });
    expect((await store.events.list()).filter((event) => event.type === 'job-failed')).toEqual([]);

    // Linking opens the connection, which wakes the held greeting at once: no clock moves.
    await linkFakeAccount(store, whatsapp);
    await vi.waitFor(() => expect(whatsapp.sent).toHaveLength(1), { timeout: 5_000 });
    expect(whatsapp.sent[0]).toMatchObject({ jid: phoneToJid('+15550000001'), content: { text: expect.any(String) } });
    await vi.waitFor(async () =>
      expect((await deliveries()).map((job) => [job.id, job.status])).toEqual([[held?.id, 'completed']]),
    );
    const linkedHealth = await app.server.inject({ method: 'GET', url: '/health' });
    expect(linkedHealth.json()).toMatchObject({ channels: { 'whatsapp-web': { state: 'open' } } });
  });

  it('turns decrypted votes on both polls into their effects: Done counts a success, Increase steps intensity', async () => {
    const config = loadConfig({ PROMPTPIPE_CHANNEL: 'whatsapp-web', PROMPTPIPE_CLOCK: 'manual', LOG_LEVEL: 'silent' });
    const store = await createSqliteStore({ filename: ':memory:' });
    const whatsapp = new FakeWhatsApp();
    await linkFakeAccount(store, whatsapp);
    const channel = startChannel(store, whatsapp);
    app = await createApplication({ config, log: createLogger({ level: 'silent' }), store, channel });
    await app.start();
    await vi.waitFor(() => expect(channel.connectionState()).toBe('open'), { timeout: 5_000 });
    const participant = await app.participants.enroll(
      { phoneNumber: '+15550000001' },
      { greet: false, source: 'test' },
    );
    const jid = phoneToJid(participant.phoneNumber);
    const polls = [
      { id: 'out_done', question: DONE_POLL.question, options: [...DONE_POLL.options], vote: 'Done' },
      {
        id: 'out_intensity',
        question: INTENSITY_POLL_QUESTION,
        options: intensityPollOptions('normal'),
        vote: 'Increase',
      },
    ];
    for (const poll of polls) {
      const { providerMessageId } = await channel.send({
        id: poll.id,
        participantId: participant.id,
        to: participant.phoneNumber,
        kind: 'poll',
        text: poll.question,
        poll: { id: poll.id, question: poll.question, options: poll.options },
      });
      whatsapp.vote({ pollId: providerMessageId ?? '', voterJid: jid, options: [poll.vote] });
    }
    await vi.waitFor(
      async () => {
        const answered = (await store.events.list({ participantId: participant.id })).filter(
          (event) => event.type === 'poll-answered',
        );
        expect(answered.map((event) => event.data)).toEqual([
          expect.objectContaining({ kind: 'success-counted', successCount: 1, option: 'Done' }),
          expect.objectContaining({ kind: 'intensity-changed', from: 'normal', to: 'high', option: 'Increase' }),
        ]);
      },
      { timeout: 10_000 },
    );
  });

  it('records sent, delivered and read in the deliveries log from WhatsApp receipts', async () => {
    const config = loadConfig({ PROMPTPIPE_CHANNEL: 'whatsapp-web', PROMPTPIPE_CLOCK: 'manual', LOG_LEVEL: 'silent' });
    const store = await createSqliteStore({ filename: ':memory:' });
    const whatsapp = new FakeWhatsApp();
    await linkFakeAccount(store, whatsapp);
    const channel = startChannel(store, whatsapp);
    app = await createApplication({ config, log: createLogger({ level: 'silent' }), store, channel });
    await app.start();
    await vi.waitFor(() => expect(channel.connectionState()).toBe('open'), { timeout: 5_000 });
    await app.participants.enroll({ phoneNumber: '+15550000001' }, { greet: true, source: 'test' });
    await app.runner.runDue();
    const sent = await vi.waitFor(() => {
      const [first] = whatsapp.sent;
      if (!first) throw new Error('nothing sent yet');
      return first;
    });
    const record = await vi.waitFor(async () => {
      const found = await store.deliveries.findByProviderId('whatsapp-web', sent.id);
      if (!found) throw new Error('no sent record yet');
      return found;
    });
    whatsapp.receipt(sent.id, 3);
    whatsapp.receipt(sent.id, 4);
    await channel.idle();
    await vi.waitFor(async () =>
      expect((await store.deliveries.listFor(record.outboundId)).map((delivery) => delivery.status)).toEqual([
        'sent',
        'delivered',
        'read',
      ]),
    );
  });

  it('is enabled alongside other channels', () => {
    const config = loadConfig({ PROMPTPIPE_CHANNEL: 'webhook,whatsapp-web' });
    expect(config.channel.enabled).toEqual(['webhook', 'whatsapp-web']);
    expect(loadConfig({ PROMPTPIPE_CHANNEL: 'whatsapp-web' }).channel.kind).toBe('whatsapp-web');
  });
});
