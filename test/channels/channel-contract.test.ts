/** The channel contract (channel-contract.ts) against every adapter, each wired to a local fake of its provider. */
import { PassThrough } from 'node:stream';
import { expect, vi } from 'vitest';
import { createConsoleChannel } from '../../src/channels/console/console-channel.ts';
import { createDeliveryReceipts } from '../../src/channels/delivery-receipts.ts';
import { createWebChatChannel } from '../../src/channels/web-chat/web-chat-channel.ts';
import { createWebhookChannel } from '../../src/channels/webhook/webhook-channel.ts';
import { phoneToJid } from '../../src/channels/whatsapp-web/whatsapp-jid.ts';
import { AppError } from '../../src/domain/errors.ts';
import { signatureHeaders } from '../../src/http/webhook-signature.ts';
import { silentLog } from '../../src/observability/log.ts';
import { createChatRoutes } from '../../src/web/chat-routes.ts';
import { createLiveTranscripts } from '../../src/web/live-transcript.ts';
import { createWebChatLinks, type WebChatLinks } from '../../src/web/web-chat-links.ts';
import { createApiHarness } from '../support/api-harness.ts';
import { FakeWhatsApp } from '../support/fake-whatsapp-socket.ts';
import { startHttpReceiver } from '../support/http-receiver.ts';
import { describeChannelContract } from './channel-contract.ts';
import { linkFakeAccount, startChannel } from './whatsapp-web/whatsapp-web-harness.ts';

const noMetrics = { recordDeliveryStatus: () => {} };

describeChannelContract(
  'webhook',
  async () => {
    const gateway = await startHttpReceiver();
    const failures: number[] = [];
    gateway.respond = () => {
      const status = failures.shift();
      return status ? { status } : { status: 200, body: JSON.stringify({ provider_message_id: 'gw-1' }) };
    };
    const secret = 'webhook-secret';
    const harness = await createApiHarness({ webhookSecret: secret });
    const post = async (body: unknown, bad = false) => {
      const raw = JSON.stringify(body);
      const signed = signatureHeaders(secret, raw, new Date());
      const response = await harness.call('POST', '/channels/webhook/messages', raw, {
        ...signed,
        ...(bad ? { 'x-promptpipe-signature': 'sha256=00' } : {}),
      });
      return response.statusCode;
    };
    return {
      channel: createWebhookChannel({ url: gateway.url, secret, timeoutMs: 5000, log: silentLog }),
      delivered: () =>
        gateway.requests.map((request) => {
          const body = JSON.parse(request.body) as { to: string; text: string; poll?: { options: string[] } };
          return { to: body.to, text: body.text, ...(body.poll ? { options: body.poll.options } : {}) };
        }),
      failNext: (kind) => failures.push(kind === 'retryable' ? 503 : 400),
      inbound: {
        harness,
        postText: (from, text, id, options) => post({ from, text, id }, options?.badSignature),
        postPollAnswer: (from, pollId, _index, option, id) =>
          post({ from, text: '', id, poll_answer: { poll_id: pollId, option } }),
        postReceipt: async () => 0,
      },
      close: async () => {
        await gateway.close();
        await harness.close();
      },
    };
  },
  {
    receipt: 'the generic webhook protocol has no receipt endpoint',
    'permanent failure': 'a generic gateway has no permanent-failure answer: every non-2xx is retried',
    'rate limited': 'the generic protocol names no wait: a 429 is retried with back-off (retryable failure)',
    'recipient blocked': 'the generic protocol has no answer for a participant who refused the channel',
  },
);

describeChannelContract(
  'console',
  async () => {
    const output = new PassThrough();
    let printed = '';
    output.on('data', (chunk: Buffer) => {
      printed += chunk.toString('utf8');
    });
    return {
      channel: createConsoleChannel({ output }),
      delivered: () => (printed ? [{ to: '+15551230001', text: printed }] : []),
      close: async () => {
        output.end();
      },
    };
  },
  {
    'inbound text': 'the console reads stdin through `promptpipe chat` (tested in console-channel.test.ts), no webhook',
    'inbound poll answer': 'no webhook: typed replies are matched as text answers by the inbound service',
    'duplicate inbound': 'no provider ids on the terminal',
    'bad signature': 'nothing to sign on the terminal',
    receipt: 'printing is delivery: there are no receipts',
    'permanent failure': 'printing to the terminal cannot be refused',
    'retryable failure': 'printing to the terminal cannot fail transiently',
    'rate limited': 'printing to the terminal is never rate-limited',
    'recipient blocked': 'the terminal cannot refuse what is printed',
  },
);

describeChannelContract(
  'whatsapp-web',
  async () => {
    const harness = await createApiHarness();
    const whatsapp = new FakeWhatsApp();
    await linkFakeAccount(harness.store, whatsapp);
    const channel = startChannel(harness.store, whatsapp);
    channel.attachInbound(harness.inbound);
    channel.attachReceipts(
      createDeliveryReceipts({ store: harness.store, clock: harness.clock, metrics: noMetrics, log: silentLog }),
    );
    await channel.start?.();
    await vi.waitFor(() => expect(channel.connectionState()).toBe('open'), { timeout: 5_000 });
    // The linked-device socket has no webhook: the fake phone emits Baileys-shaped events, and the "status" of the
    // provider's request is whether the channel handed the event on without an error.
    const handled = async (emit: () => void): Promise<number> => {
      emit();
      await channel.idle();
      return 200;
    };
    return {
      channel,
      delivered: () =>
        whatsapp.sent.map(({ jid, content }) => ({
          to: `+${jid.split('@')[0]}`,
          text: 'text' in content ? content.text : content.poll.name,
          ...('poll' in content ? { options: content.poll.values } : {}),
        })),
      failNext: () => {
        whatsapp.failNextSend = true;
      },
      inbound: {
        harness,
        postText: (from, text, id) => handled(() => whatsapp.receiveText(from, text, id)),
        // A real WhatsApp poll: sent first (its secret stored), then the phone's encrypted vote for the option.
        postPollAnswer: async (from, pollId, _index, option, id) => {
          const participant = await harness.participants.findByPhone(from);
          const sent = await channel.send({
            id: pollId,
            participantId: participant?.id ?? '',
            to: from,
            kind: 'poll',
            text: 'Did you do it?',
            poll: { id: pollId, question: 'Did you do it?', options: [option, 'Next time'] },
          });
          return handled(() =>
            whatsapp.vote({ pollId: sent.providerMessageId ?? '', voterJid: phoneToJid(from), options: [option], id }),
          );
        },
        postReceipt: (providerMessageId) => handled(() => whatsapp.receipt(providerMessageId, 3)),
      },
      close: async () => {
        await channel.stop?.();
        await harness.close();
      },
    };
  },
  {
    'bad signature':
      'no webhook to sign: the linked-device connection is authenticated and end-to-end encrypted by WhatsApp itself',
    'permanent failure':
      'WhatsApp Web refuses no send permanently (a number without WhatsApp is accepted and never delivered); every failure is retried',
    'rate limited': 'the linked-device socket has no rate-limit answer naming a wait',
    'recipient blocked': 'WhatsApp does not tell a sender it was blocked: the message is simply never delivered',
  },
);

describeChannelContract(
  'webchat',
  async () => {
    const links: { current?: WebChatLinks } = {};
    const harness = await createApiHarness({
      extraChannelRoutes: ({ inbound, store, clock }) => {
        links.current = createWebChatLinks({ store, clock });
        return [
          createChatRoutes({
            store,
            participants: {
              get: async (id) => {
                const participant = await store.participants.get(id);
                if (!participant) throw new AppError('not_found', `participant ${id} not found`);
                return participant;
              },
            },
            inbound,
            links: links.current,
            live: createLiveTranscripts,
          }),
        ];
      },
    });
    /** Posts to the participant's private chat link, as the page's script does. */
    const post = async (from: string, body: Record<string, string>): Promise<number> => {
      const participant = await harness.participants.findByPhone(from);
      const path = await (links.current as WebChatLinks).pathFor(participant?.id ?? '');
      const response = await harness.call('POST', `${path}/messages`, body);
      return response.statusCode;
    };
    return {
      channel: createWebChatChannel(),
      delivered: () => [],
      inbound: {
        harness,
        postText: (from, text) => post(from, { text }),
        postPollAnswer: (from, pollId, _index, option) => post(from, { poll_id: pollId, option }),
        postReceipt: async () => 0,
      },
      close: () => harness.close(),
    };
  },
  {
    'send text':
      'pull-based: the outbox has written the transcript entry the page streams; send only acknowledges (browser test)',
    'send poll': 'pull-based: the poll is the transcript entry the page shows as buttons (browser test)',
    'duplicate inbound': 'a web-chat post carries no provider message id: each post is a new message',
    'bad signature': 'the credential is the private link: an unknown or revoked token is a 404 (web-routes.test.ts)',
    receipt: 'committing the transcript entry is the delivery: there are no receipts',
    'permanent failure': 'send only acknowledges: nothing can refuse it',
    'retryable failure': 'send only acknowledges: nothing can fail transiently',
    'rate limited': 'send only acknowledges: there is no provider to rate-limit it',
    'recipient blocked': 'send only acknowledges: the participant cannot refuse it',
  },
);
