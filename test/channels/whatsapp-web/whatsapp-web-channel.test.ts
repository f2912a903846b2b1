/**
 * The whatsapp-web channel against the fake WhatsApp (Baileys-shaped events, real poll-vote encryption), on SQLite.
 * The credentials-survive-restart test also runs on PostgreSQL when PROMPTPIPE_TEST_PG_URL is set.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { phoneToJid } from '../../../src/channels/whatsapp-web/whatsapp-jid.ts';
import {
  WhatsAppNotConnectedError,
  type WhatsAppWebChannel,
} from '../../../src/channels/whatsapp-web/whatsapp-web-channel.ts';
import { DONE_POLL, INTENSITY_POLL_QUESTION, intensityPollOptions } from '../../../src/domain/polls.ts';
import { createPostgresStore } from '../../../src/store/postgres/postgres-store.ts';
import { createSqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../../src/store/store.ts';
import { FakeWhatsApp } from '../../support/fake-whatsapp-socket.ts';
import { createRecordingReceiver, linkFakeAccount, startChannel } from './whatsapp-web-harness.ts';

const PARTICIPANT = '+15550000001';
const PARTICIPANT_JID = phoneToJid(PARTICIPANT);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(options: { link?: boolean; store?: Store } = {}) {
  const store = options.store ?? (await createSqliteStore({ filename: ':memory:' }));
  const whatsapp = new FakeWhatsApp();
  if (options.link ?? true) await linkFakeAccount(store, whatsapp);
  const channel = startChannel(store, whatsapp);
  const receiver = createRecordingReceiver([PARTICIPANT]);
  channel.attachInbound(receiver);
  await channel.start?.();
  cleanups.push(async () => {
    await channel.stop?.();
    if (!options.store) await store.close();
  });
  return { store, whatsapp, channel, receiver };
}

async function waitOpen(channel: WhatsAppWebChannel): Promise<void> {
  await vi.waitFor(() => expect(channel.connectionState()).toBe('open'), { timeout: 5_000 });
}

function textMessage(id: string, text: string) {
  return { id, participantId: 'participant_1', to: PARTICIPANT, kind: 'text' as const, text };
}

function pollMessage(id: string, question: string, options: string[]) {
  return {
    id,
    participantId: 'participant_1',
    to: PARTICIPANT,
    kind: 'poll' as const,
    text: question,
    poll: { id, question, options },
  };
}

describe('whatsapp-web channel', () => {
  it('links through the QR flow and stores the credentials in the database', async () => {
    const { store, whatsapp, channel } = await setup();
    await waitOpen(channel);
    const creds = (await store.whatsappAuth.read('default', 'creds', [''])).get('');
    expect(creds).toContain('"registered":true');
    expect(creds).toContain('15550009999');
    expect(whatsapp.sockets.length).toBeGreaterThanOrEqual(2);
    // The linking connection is closed once linked; only the channel's is open.
    expect(whatsapp.sockets.filter((socket) => socket.open)).toHaveLength(1);
  });

  it('starts without credentials, says it is not linked, and holds deliveries instead of failing them', async () => {
    const { channel, whatsapp } = await setup({ link: false });
    await vi.waitFor(() => expect(channel.connectionState()).toBe('not_linked'));
    const failure = await channel.send(textMessage('out_1', 'hi')).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WhatsAppNotConnectedError);
    // Nobody has linked the device: the message waits long (linking wakes it at once), named for the wake-up.
    expect(failure).toMatchObject({ deliveryHoldMs: 15 * 60_000, wakeOn: 'whatsapp-web' });
    expect(channel.deliveryHold()).toEqual({ deliveryHoldMs: 15 * 60_000, wakeOn: 'whatsapp-web' });
    expect(whatsapp.sockets).toHaveLength(0);
  });

  it('sends text once per outbound id and records it for receipts', async () => {
    const { store, whatsapp, channel } = await setup();
    await waitOpen(channel);
    const first = await channel.send(textMessage('out_1', 'Time for a walk'));
    const again = await channel.send(textMessage('out_1', 'Time for a walk'));
    expect(again).toEqual(first);
    expect(whatsapp.sent).toEqual([
      { id: first.providerMessageId, jid: PARTICIPANT_JID, content: { text: 'Time for a walk' } },
    ]);
    expect(await store.whatsappMessages.getByOutboundId('out_1')).toMatchObject({
      kind: 'text',
      remoteJid: PARTICIPANT_JID,
    });
  });

  it('turns delivered and read receipts into events of the participant with the outbound id', async () => {
    const { store, whatsapp, channel } = await setup();
    await waitOpen(channel);
    const { providerMessageId } = await channel.send(textMessage('out_1', 'hello'));
    whatsapp.receipt(providerMessageId ?? '', 2);
    whatsapp.receipt(providerMessageId ?? '', 3);
    whatsapp.receipt(providerMessageId ?? '', 4);
    whatsapp.receipt('UNKNOWN', 3);
    await channel.idle();
    const events = await store.events.list({ participantId: 'participant_1' });
    expect(events.map((event) => [event.type, event.data['outbound_id']])).toEqual([
      ['message-delivered', 'out_1'],
      ['message-read', 'out_1'],
    ]);
  });

  it('sends both polls as real single-choice polls and decrypts votes into structured answers', async () => {
    const { whatsapp, channel, receiver } = await setup();
    await waitOpen(channel);
    await channel.send(pollMessage('out_done', DONE_POLL.question, [...DONE_POLL.options]));
    const intensityOptions = intensityPollOptions('normal');
    await channel.send(pollMessage('out_intensity', INTENSITY_POLL_QUESTION, intensityOptions));
    const donePoll = whatsapp.findPoll({ question: DONE_POLL.question });
    expect(donePoll.content.poll).toMatchObject({
      name: 'Did you do it?',
      values: ['Done', 'Next time'],
      selectableCount: 1,
    });
    expect(donePoll.content.poll.messageSecret).toHaveLength(32);
    const intensityPoll = whatsapp.findPoll({ question: INTENSITY_POLL_QUESTION });

    whatsapp.vote({ pollId: donePoll.id, voterJid: PARTICIPANT_JID, options: ['Done'] });
    whatsapp.vote({ pollId: intensityPoll.id, voterJid: PARTICIPANT_JID, options: ['Increase'] });
    await channel.idle();
    expect(receiver.received.map((message) => message.pollAnswer)).toEqual([
      { pollId: 'out_done', question: 'Did you do it?', option: 'Done' },
      { pollId: 'out_intensity', question: "How's the intensity?", option: 'Increase' },
    ]);
    expect(
      receiver.received.every((message) => message.from === PARTICIPANT && message.channel === 'whatsapp-web'),
    ).toBe(true);
  });

  it('decrypts a vote from a LID chat (voter and creator addressed by LID) and maps the voter to the phone number', async () => {
    const { whatsapp, channel, receiver } = await setup();
    await waitOpen(channel);
    await channel.send(pollMessage('out_done', DONE_POLL.question, [...DONE_POLL.options]));
    const poll = whatsapp.findPoll({ question: DONE_POLL.question });
    whatsapp.vote({
      pollId: poll.id,
      voterJid: '11112222333344@lid',
      alt: PARTICIPANT_JID,
      creatorJid: `${whatsapp.accountLid}@lid`,
      options: ['Next time'],
    });
    await channel.idle();
    expect(receiver.received).toEqual([
      expect.objectContaining({
        from: PARTICIPANT,
        pollAnswer: { pollId: 'out_done', question: 'Did you do it?', option: 'Next time' },
      }),
    ]);
  });

  it('records and ignores a vote for an unknown poll, and a vote it cannot decrypt', async () => {
    const { store, whatsapp, channel, receiver } = await setup();
    await waitOpen(channel);
    whatsapp.receive({
      from: PARTICIPANT_JID,
      message: {
        pollUpdateMessage: {
          pollCreationMessageKey: { remoteJid: PARTICIPANT_JID, fromMe: true, id: 'NEVER_SENT' },
          vote: { encPayload: randomBytes(40), encIv: randomBytes(12) },
        },
      },
    });
    await channel.send(pollMessage('out_done', DONE_POLL.question, [...DONE_POLL.options]));
    const poll = whatsapp.findPoll({ question: DONE_POLL.question });
    whatsapp.vote({
      pollId: poll.id,
      voterJid: PARTICIPANT_JID,
      options: ['Done'],
      creatorJid: '19999999999@s.whatsapp.net',
    });
    await channel.idle();
    expect(receiver.received).toEqual([]);
    const ignored = (await store.events.list()).filter((event) => event.type === 'poll-vote-ignored');
    expect(ignored.map((event) => event.data['reason'])).toEqual(['unknown poll', 'vote could not be decrypted']);
    expect(ignored[0]?.data).toMatchObject({ poll_message_id: 'NEVER_SENT', from: PARTICIPANT });
  });

  it('passes text and captions on, notes other media, drops duplicates, groups and our own messages, and shows typing', async () => {
    const { whatsapp, channel, receiver } = await setup();
    await waitOpen(channel);
    const id = whatsapp.receiveText(PARTICIPANT, 'I walked today');
    whatsapp.receiveText(PARTICIPANT, 'I walked today', id);
    whatsapp.receive({ from: PARTICIPANT_JID, message: { extendedTextMessage: { text: 'see https://example.org' } } });
    whatsapp.receive({ from: PARTICIPANT_JID, message: { imageMessage: { caption: 'my walk' } } });
    whatsapp.receive({ from: PARTICIPANT_JID, message: { ephemeralMessage: { message: { audioMessage: {} } } } });
    whatsapp.receive({ from: '120363000000000000@g.us', message: { conversation: 'group chatter' } });
    whatsapp.receive({ from: PARTICIPANT_JID, fromMe: true, message: { conversation: 'sent from the phone' } });
    whatsapp.receive({ from: PARTICIPANT_JID, message: { reactionMessage: {} } });
    whatsapp.receiveText('+15550000777', 'not enrolled');
    await channel.idle();
    expect(receiver.received.map((message) => message.text)).toEqual([
      'I walked today',
      'see https://example.org',
      'my walk',
      expect.stringContaining('voice message'),
    ]);
    expect(receiver.received[0]?.providerMessageId).toBe(id);
    expect(whatsapp.presences).toContainEqual({ type: 'composing', jid: PARTICIPANT_JID });
  });

  it('maps a LID-only sender back to the phone number through the LID mapping, and ignores an unmappable one', async () => {
    const { store, whatsapp, channel, receiver } = await setup();
    await waitOpen(channel);
    whatsapp.receive({ from: '55556666777788@lid', message: { conversation: 'who am I?' } });
    whatsapp.announceLid('55556666777788', PARTICIPANT);
    whatsapp.receive({ from: '55556666777788@lid', message: { conversation: 'hello from a LID' } });
    await channel.idle();
    expect(receiver.received.map((message) => [message.from, message.text])).toEqual([
      [PARTICIPANT, 'hello from a LID'],
    ]);
    expect((await store.events.list()).map((event) => event.type)).toContain('whatsapp-sender-unresolved');
  });

  it('reconnects after a dropped connection and keeps sending', async () => {
    const { whatsapp, channel } = await setup();
    await waitOpen(channel);
    const socketsBefore = whatsapp.sockets.length;
    whatsapp.drop();
    await vi.waitFor(() => expect(whatsapp.sockets.length).toBeGreaterThan(socketsBefore));
    await waitOpen(channel);
    await channel.send(textMessage('out_after', 'still here'));
    expect(whatsapp.sent.at(-1)?.content).toEqual({ text: 'still here' });
  });

  it('reports a logged-out device loudly, forgets the dead credentials and holds deliveries', async () => {
    const { store, whatsapp, channel } = await setup();
    await waitOpen(channel);
    whatsapp.logOutFromPhone();
    await vi.waitFor(() => expect(channel.connectionState()).toBe('logged_out'));
    await vi.waitFor(async () =>
      expect((await store.events.list()).map((event) => event.type)).toContain('whatsapp-logged-out'),
    );
    expect(await store.whatsappAuth.read('default', 'creds', [''])).toEqual(new Map());
    await expect(channel.send(textMessage('out_1', 'hi'))).rejects.toBeInstanceOf(WhatsAppNotConnectedError);
  });
});

const pgUrl = process.env['PROMPTPIPE_TEST_PG_URL'];
if (!pgUrl) console.warn('WhatsApp credentials-on-PostgreSQL test skipped: PROMPTPIPE_TEST_PG_URL is not set');
const pgSchemas: string[] = [];
afterAll(async () => {
  if (!pgUrl || pgSchemas.length === 0) return;
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  for (const schema of pgSchemas) await client.query(`drop schema if exists "${schema}" cascade`);
  await client.end();
});

describe('whatsapp-web credentials survive a restart', () => {
  async function restartKeepsLink(openStore: () => Promise<Store>): Promise<void> {
    const whatsapp = new FakeWhatsApp();
    const firstStore = await openStore();
    await linkFakeAccount(firstStore, whatsapp);
    const first = startChannel(firstStore, whatsapp);
    await first.start?.();
    await waitOpen(first);
    await first.stop?.();
    await firstStore.close();
    const qrCodesBefore = whatsapp.qrCount;

    const secondStore = await openStore();
    const second = startChannel(secondStore, whatsapp);
    await second.start?.();
    try {
      await waitOpen(second);
      expect(whatsapp.qrCount).toBe(qrCodesBefore);
      expect(whatsapp.current?.user?.id).toBe('15550009999:7@s.whatsapp.net');
      await second.send(textMessage('out_1', 'after restart'));
      expect(whatsapp.sent.at(-1)?.content).toEqual({ text: 'after restart' });
    } finally {
      await second.stop?.();
      await secondStore.close();
    }
  }

  it('on SQLite', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const directory = mkdtempSync(join(tmpdir(), 'promptpipe-whatsapp-'));
    try {
      await restartKeepsLink(() => createSqliteStore({ filename: join(directory, 'promptpipe.db') }));
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it.skipIf(!pgUrl)('on PostgreSQL', async () => {
    const schema = `promptpipe_whatsapp_${randomBytes(4).toString('hex')}`;
    pgSchemas.push(schema);
    await restartKeepsLink(() => createPostgresStore({ connectionString: pgUrl ?? '', schema }));
  });
});
