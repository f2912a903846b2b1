import { afterEach, describe, expect, it } from 'vitest';
import { type Channel, PermanentDeliveryError } from '../../src/channels/channel.ts';
import { createOutboxMessenger } from '../../src/channels/outbox-messenger.ts';
import { createWhatsAppCloudChannel } from '../../src/channels/whatsapp-cloud/whatsapp-cloud-channel.ts';
import { pollBody } from '../../src/channels/whatsapp-cloud/whatsapp-cloud-messages.ts';
import { signWhatsAppBody } from '../../src/channels/whatsapp-cloud/whatsapp-cloud-signature.ts';
import { createWhatsAppCloudRoutes } from '../../src/channels/whatsapp-cloud/whatsapp-cloud-webhook-route.ts';
import { silentLog } from '../../src/observability/log.ts';
import type { ApiHarness } from '../support/api-harness.ts';
import {
  type FakeWhatsAppCloudApi,
  startFakeWhatsAppCloudApi,
  whatsappWebhookBody,
} from '../support/fake-whatsapp-cloud-api.ts';
import { outboundMessage as message, providerWebhookHarness } from '../support/provider-channel-tests.ts';

const TOKEN = 'EAAG-test-token';
const PHONE_NUMBER_ID = '1234567890';
const APP_SECRET = 'app-secret';
const VERIFY_TOKEN = 'verify-me';
const PATH = '/channels/whatsapp-cloud/webhook';
const NOW = new Date('2026-03-02T14:00:00.000Z');
const HOUR = 60 * 60 * 1000;

let fake: FakeWhatsAppCloudApi | undefined;
let harness: ApiHarness | undefined;
afterEach(async () => {
  await fake?.close();
  await harness?.close();
  fake = undefined;
  harness = undefined;
});

async function channelWith(
  options: { lastInboundAt?: Date | undefined; templateName?: string } = {
    lastInboundAt: new Date(NOW.getTime() - HOUR),
  },
): Promise<{ channel: Channel; api: FakeWhatsAppCloudApi }> {
  const api = await startFakeWhatsAppCloudApi({
    accessToken: TOKEN,
    phoneNumberId: PHONE_NUMBER_ID,
    templates: [
      { name: 'daily_checkin', language: 'en_US', bodyVariables: 1 },
      { name: 'tpl', language: 'en_US', bodyVariables: 1 },
    ],
  });
  fake = api;
  const channel = createWhatsAppCloudChannel({
    accessToken: TOKEN,
    phoneNumberId: PHONE_NUMBER_ID,
    apiUrl: api.url,
    templateName: options.templateName,
    templateLanguage: 'en_US',
    lastInboundAt: async () => options.lastInboundAt,
    clock: { now: () => NOW },
    timeoutMs: 5000,
    log: silentLog,
  });
  return { channel, api };
}

describe('WhatsApp Cloud channel: outbound', () => {
  it('sends text with the bearer token and returns the wamid', async () => {
    const { channel, api } = await channelWith();
    const result = await channel.send(message());
    expect(api.rejected).toEqual([]);
    expect(api.accepted).toHaveLength(1);
    expect(result.providerMessageId).toBe(api.accepted[0]?.id);
    expect(api.accepted[0]?.body).toMatchObject({ to: '15551230001', type: 'text', text: { body: 'Hello there' } });
  });

  it('sends a poll of up to 3 options as reply buttons carrying the poll id, more as a list', async () => {
    const { channel, api } = await channelWith();
    await channel.send(
      message({
        kind: 'poll',
        text: 'Did you do it?',
        poll: { id: 'poll_7', question: 'Did you do it?', options: ['Done', 'Next time, I promise to try harder'] },
      }),
    );
    await channel.send(
      message({
        id: 'out_2',
        kind: 'poll',
        text: 'Pick one',
        poll: { id: 'poll_8', question: 'Pick one', options: ['a', 'b', 'c', 'd'] },
      }),
    );
    expect(api.rejected).toEqual([]);
    expect(api.accepted[0]?.body).toMatchObject({
      type: 'interactive',
      interactive: {
        type: 'button',
        body: { text: 'Did you do it?' },
        action: {
          buttons: [
            { type: 'reply', reply: { id: 'poll_7:0', title: 'Done' } },
            { type: 'reply', reply: { id: 'poll_7:1', title: 'Next time, I promis…' } },
          ],
        },
      },
    });
    const list = api.accepted[1]?.body.interactive as { type: string; action: { sections: { rows: unknown[] }[] } };
    expect(list.type).toBe('list');
    expect(list.action.sections[0]?.rows).toHaveLength(4);
    expect(list.action.sections[0]?.rows[3]).toMatchObject({ id: 'poll_8:3', title: 'd' });
  });

  it('outside the 24-hour window sends the template with the text as its body parameter', async () => {
    const { channel, api } = await channelWith({
      lastInboundAt: new Date(NOW.getTime() - 25 * HOUR),
      templateName: 'daily_checkin',
    });
    await channel.send(message());
    expect(api.accepted[0]?.body).toMatchObject({
      type: 'template',
      template: {
        name: 'daily_checkin',
        language: { code: 'en_US' },
        components: [{ type: 'body', parameters: [{ type: 'text', text: 'Hello there' }] }],
      },
    });
  });

  it('outside the window without a template fails permanently with a clear reason, sending nothing', async () => {
    const { channel, api } = await channelWith({ lastInboundAt: undefined });
    const error = await channel.send(message()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PermanentDeliveryError);
    expect((error as PermanentDeliveryError).message).toMatch(/24-hour window.*WHATSAPP_CLOUD_TEMPLATE_NAME/);
    expect(api.accepted).toEqual([]);
  });

  it('error 131047 takes the template path', async () => {
    const { channel, api } = await channelWith({ lastInboundAt: new Date(NOW.getTime() - HOUR), templateName: 'tpl' });
    api.failures.push({ status: 400, code: 131047, message: 'Re-engagement message' });
    const result = await channel.send(message());
    expect(api.accepted.map((accepted) => accepted.body.type)).toEqual(['template']);
    expect(result.providerMessageId).toBe(api.accepted[0]?.id);
  });

  it('429 and 5xx reject with a retryable error; another 4xx is permanent with the provider code', async () => {
    const { channel, api } = await channelWith();
    api.failures.push({ status: 429, code: 130429, message: 'Rate limit hit' });
    const rateLimited = await channel.send(message()).catch((caught: unknown) => caught);
    expect(rateLimited).toBeInstanceOf(Error);
    expect(rateLimited).not.toBeInstanceOf(PermanentDeliveryError);
    api.failures.push({ status: 500, code: 131000, message: 'Something went wrong' });
    expect(await channel.send(message()).catch((caught: unknown) => caught)).not.toBeInstanceOf(PermanentDeliveryError);
    api.failures.push({ status: 400, code: 131026, message: 'Message Undeliverable' });
    const permanent = await channel.send(message()).catch((caught: unknown) => caught);
    expect(permanent).toBeInstanceOf(PermanentDeliveryError);
    expect((permanent as PermanentDeliveryError).code).toBe('131026');
    expect((permanent as PermanentDeliveryError).message).toContain('Message Undeliverable');
    expect((permanent as PermanentDeliveryError).message).not.toContain(TOKEN);
  });

  it('a network error is retryable', async () => {
    const { channel, api } = await channelWith();
    await api.close();
    fake = undefined;
    const error = await channel.send(message()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(PermanentDeliveryError);
  });
});

async function webhookHarness(): Promise<ApiHarness> {
  harness = await providerWebhookHarness(({ inbound, receipts }) =>
    createWhatsAppCloudRoutes({ inbound, receipts, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, log: silentLog }),
  );
  return harness;
}

async function postSigned(h: ApiHarness, body: unknown, signature?: string) {
  const raw = JSON.stringify(body);
  const response = await h.call('POST', PATH, raw, {
    'x-hub-signature-256': signature ?? signWhatsAppBody(APP_SECRET, raw),
  });
  await h.inbound.idle();
  return response;
}

function textMessage(id: string, text: string): Record<string, unknown> {
  return { from: '15551230001', id, timestamp: '1772460000', type: 'text', text: { body: text } };
}

describe('WhatsApp Cloud webhook', () => {
  it('answers the subscription handshake with the challenge, 403 for a wrong token', async () => {
    const h = await webhookHarness();
    const ok = await h.call(
      'GET',
      `${PATH}?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1158201444`,
    );
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toBe('1158201444');
    const wrong = await h.call('GET', `${PATH}?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1158201444`);
    expect(wrong.statusCode).toBe(403);
  });

  it('records a text message once (duplicates by wamid), answering 200', async () => {
    const h = await webhookHarness();
    const ada = await h.enroll('+15551230001');
    const body = whatsappWebhookBody({ messages: [textMessage('wamid.A1', 'Hello coach')] });
    expect((await postSigned(h, body)).statusCode).toBe(200);
    expect((await postSigned(h, body)).statusCode).toBe(200);
    expect(h.flow.messages).toHaveLength(1);
    expect(h.flow.messages[0]).toMatchObject({ participantId: ada.id, text: 'Hello coach' });
  });

  it('refuses a missing or wrong signature with 401 and records nothing', async () => {
    const h = await webhookHarness();
    await h.enroll('+15551230001');
    const body = whatsappWebhookBody({ messages: [textMessage('wamid.B1', 'Hi')] });
    expect((await postSigned(h, body, 'sha256=0000')).statusCode).toBe(401);
    const raw = JSON.stringify(body);
    const missing = await h.call('POST', PATH, raw);
    expect(missing.statusCode).toBe(401);
    expect(h.flow.messages).toEqual([]);
  });

  it('turns a button reply into a structured poll answer and an image into a recorded placeholder', async () => {
    const h = await webhookHarness();
    await h.enroll('+15551230001');
    const body = whatsappWebhookBody({
      messages: [
        {
          from: '15551230001',
          id: 'wamid.C1',
          timestamp: '1772460000',
          type: 'interactive',
          interactive: { type: 'button_reply', button_reply: { id: 'poll_7:0', title: 'Done' } },
        },
        { from: '15551230001', id: 'wamid.C2', timestamp: '1772460001', type: 'image', image: { id: 'media1' } },
      ],
    });
    expect((await postSigned(h, body)).statusCode).toBe(200);
    expect(h.flow.messages.map((received) => received.text)).toEqual(['Done', '[image]']);
    const recorded = await h.store.inbound.get('in_2');
    expect(recorded?.pollAnswer).toMatchObject({ option: 'Done' });
  });

  it('maps a button reply whose title WhatsApp shortened back to the full option by its reply id', async () => {
    const h = await webhookHarness();
    const ada = await h.enroll('+15551230001');
    const options = ['Keep the current intensity', 'Make it a little harder'];
    const messenger = createOutboxMessenger({ store: h.store, clock: h.clock, newId: () => 'poll_long' });
    await messenger.send(
      ada.id,
      { type: 'poll', question: "How's the intensity?", options },
      { kind: 'poll', module: 'scheduler' },
    );
    // What the buttons carried: ids `<poll>:<index>`, titles cut to 20 characters.
    const buttons = pollBody({
      id: 'poll_long',
      participantId: ada.id,
      to: '+15551230001',
      kind: 'poll',
      text: "How's the intensity?",
      poll: { id: 'poll_long', question: "How's the intensity?", options },
    });
    const reply = (buttons as { interactive: { action: { buttons: { reply: { id: string; title: string } }[] } } })
      .interactive.action.buttons[1]?.reply;
    expect(reply?.title).toHaveLength(20);
    expect(options[1]?.startsWith(reply?.title.slice(0, -1) ?? '-')).toBe(true);
    const body = whatsappWebhookBody({
      messages: [
        {
          from: '15551230001',
          id: 'wamid.L1',
          timestamp: '1772460000',
          type: 'interactive',
          interactive: { type: 'button_reply', button_reply: reply },
        },
      ],
    });
    expect((await postSigned(h, body)).statusCode).toBe(200);
    expect(h.flow.messages.at(-1)?.pollAnswer).toMatchObject({
      pollId: 'poll_long',
      question: "How's the intensity?",
      option: 'Make it a little harder',
    });
  });

  it('records statuses of our messages as delivery receipts (failed with its error code)', async () => {
    const h = await webhookHarness();
    const ada = await h.enroll('+15551230001');
    await h.store.deliveries.record({
      outboundId: 'out_9',
      participantId: ada.id,
      channel: 'whatsapp-cloud',
      providerMessageId: 'wamid.OUT9',
      status: 'sent',
      createdAt: NOW,
    });
    const body = whatsappWebhookBody({
      statuses: [
        { id: 'wamid.OUT9', status: 'delivered', timestamp: '1772460100', recipient_id: '15551230001' },
        {
          id: 'wamid.OUT9',
          status: 'failed',
          timestamp: '1772460200',
          recipient_id: '15551230001',
          errors: [{ code: 131026, title: 'Message undeliverable', error_data: { details: 'Receiver incapable' } }],
        },
      ],
    });
    expect((await postSigned(h, body)).statusCode).toBe(200);
    const records = await h.store.deliveries.listFor('out_9');
    expect(records.map((record) => record.status)).toEqual(['sent', 'delivered', 'failed']);
    expect(records[2]).toMatchObject({ errorCode: '131026', errorMessage: 'Receiver incapable' });
  });
});
