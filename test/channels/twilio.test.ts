import { afterEach, describe, expect, it } from 'vitest';
import { type Channel, PermanentDeliveryError } from '../../src/channels/channel.ts';
import { createTwilioChannel } from '../../src/channels/twilio/twilio-channel.ts';
import { createTwilioRoutes } from '../../src/channels/twilio/twilio-webhook-route.ts';
import { silentLog } from '../../src/observability/log.ts';
import type { ApiHarness } from '../support/api-harness.ts';
import { type FakeTwilioApi, startFakeTwilioApi } from '../support/fake-twilio-api.ts';
import { outboundMessage as message, providerWebhookHarness } from '../support/provider-channel-tests.ts';
import { signTwilioRequest } from '../support/twilio-signing.ts';

const ACCOUNT_SID = 'AC00000000000000000000000000000001';
const AUTH_TOKEN = 'twilio-auth-token';
const PUBLIC_URL = 'https://coach.example.org';

let fake: FakeTwilioApi | undefined;
let harness: ApiHarness | undefined;
afterEach(async () => {
  await fake?.close();
  await harness?.close();
  fake = undefined;
  harness = undefined;
});

async function channelWith(from = '+15550001111'): Promise<{ channel: Channel; api: FakeTwilioApi }> {
  const api = await startFakeTwilioApi({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  fake = api;
  const channel = createTwilioChannel({
    accountSid: ACCOUNT_SID,
    authToken: AUTH_TOKEN,
    from,
    messagingServiceSid: undefined,
    publicUrl: PUBLIC_URL,
    apiUrl: api.url,
    timeoutMs: 5000,
  });
  return { channel, api };
}

describe('Twilio channel: outbound', () => {
  it('sends SMS through the Messages resource with Basic auth and the status callback', async () => {
    const { channel, api } = await channelWith();
    const result = await channel.send(message());
    expect(api.rejected).toEqual([]);
    expect(result.providerMessageId).toBe(api.accepted[0]?.sid);
    expect(api.accepted[0]?.params).toEqual({
      To: '+15551230001',
      From: '+15550001111',
      Body: 'Hello there',
      StatusCallback: `${PUBLIC_URL}/channels/twilio/status`,
    });
    expect(channel.supportsPolls).toBe(false);
    expect(channel.confirmsOptOut).toBe(true);
  });

  it('addresses WhatsApp recipients with the whatsapp: prefix when the sender has it', async () => {
    const { channel, api } = await channelWith('whatsapp:+14155238886');
    await channel.send(message());
    expect(api.accepted[0]?.params).toMatchObject({ To: 'whatsapp:+15551230001', From: 'whatsapp:+14155238886' });
    expect(channel.confirmsOptOut).toBe(false);
  });

  it('429/5xx/network are retryable; other 4xx are permanent with the Twilio code', async () => {
    const { channel, api } = await channelWith();
    api.failures.push({ status: 429, code: 20429, message: 'Too Many Requests' });
    const limited = await channel.send(message()).catch((caught: unknown) => caught);
    expect(limited).toBeInstanceOf(Error);
    expect(limited).not.toBeInstanceOf(PermanentDeliveryError);
    api.failures.push({
      status: 400,
      code: 21211,
      message: "The 'To' number +15551230001 is not a valid phone number.",
    });
    const permanent = await channel.send(message()).catch((caught: unknown) => caught);
    expect(permanent).toBeInstanceOf(PermanentDeliveryError);
    expect((permanent as PermanentDeliveryError).code).toBe('21211');
    expect((permanent as PermanentDeliveryError).message).not.toContain(AUTH_TOKEN);
    await api.close();
    fake = undefined;
    const network = await channel.send(message()).catch((caught: unknown) => caught);
    expect(network).toBeInstanceOf(Error);
    expect(network).not.toBeInstanceOf(PermanentDeliveryError);
  });
});

async function webhookHarness(): Promise<ApiHarness> {
  harness = await providerWebhookHarness(({ inbound, receipts }) =>
    createTwilioRoutes({ inbound, receipts, authToken: AUTH_TOKEN, publicUrl: PUBLIC_URL, log: silentLog }),
  );
  return harness;
}

async function postForm(h: ApiHarness, path: string, params: Record<string, string>, signature?: string) {
  const response = await h.app.inject({
    method: 'POST',
    url: path,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': signature ?? signTwilioRequest(AUTH_TOKEN, `${PUBLIC_URL}${path}`, params),
    },
    payload: new URLSearchParams(params).toString(),
  });
  await h.inbound.idle();
  return response;
}

function incoming(sid: string, body: string, from = '+15551230001'): Record<string, string> {
  return {
    ToCountry: 'US',
    SmsMessageSid: sid,
    NumMedia: '0',
    SmsSid: sid,
    SmsStatus: 'received',
    Body: body,
    To: '+15550001111',
    NumSegments: '1',
    MessageSid: sid,
    AccountSid: ACCOUNT_SID,
    From: from,
    ApiVersion: '2010-04-01',
  };
}

describe('Twilio webhooks', () => {
  it('records an incoming SMS once (MessageSid) and answers empty TwiML', async () => {
    const h = await webhookHarness();
    const ada = await h.enroll('+15551230001');
    const params = incoming('SM1', 'Hello coach');
    const first = await postForm(h, '/channels/twilio/messages', params);
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toContain('text/xml');
    expect(first.body).toContain('<Response/>');
    expect((await postForm(h, '/channels/twilio/messages', params)).statusCode).toBe(200);
    expect(h.flow.messages).toHaveLength(1);
    expect(h.flow.messages[0]).toMatchObject({ participantId: ada.id, text: 'Hello coach' });
  });

  it('strips whatsapp: from the sender', async () => {
    const h = await webhookHarness();
    const ada = await h.enroll('+15551230001');
    await postForm(h, '/channels/twilio/messages', incoming('SM2', 'Hi', 'whatsapp:+15551230001'));
    expect(h.flow.messages[0]).toMatchObject({ participantId: ada.id, text: 'Hi' });
  });

  it('refuses a wrong signature with 403 and records nothing', async () => {
    const h = await webhookHarness();
    await h.enroll('+15551230001');
    const response = await postForm(h, '/channels/twilio/messages', incoming('SM3', 'Hi'), 'bm90IGEgc2lnbmF0dXJl');
    expect(response.statusCode).toBe(403);
    // Signed for another URL (not TWILIO_PUBLIC_URL + path): refused too.
    const params = incoming('SM3', 'Hi');
    const elsewhere = signTwilioRequest(AUTH_TOKEN, 'https://other.example.org/channels/twilio/messages', params);
    expect((await postForm(h, '/channels/twilio/messages', params, elsewhere)).statusCode).toBe(403);
    expect(h.flow.messages).toEqual([]);
    expect(await h.store.inbound.get('in_2')).toBeUndefined();
  });

  it('turns status callbacks into delivery receipts with the ErrorCode', async () => {
    const h = await webhookHarness();
    const ada = await h.enroll('+15551230001');
    await h.store.deliveries.record({
      outboundId: 'out_5',
      participantId: ada.id,
      channel: 'twilio',
      providerMessageId: 'SM99',
      status: 'sent',
      createdAt: new Date(),
    });
    const status = (value: string, extra: Record<string, string> = {}) => ({
      MessageSid: 'SM99',
      SmsSid: 'SM99',
      MessageStatus: value,
      SmsStatus: value,
      AccountSid: ACCOUNT_SID,
      To: '+15551230001',
      From: '+15550001111',
      ApiVersion: '2010-04-01',
      ...extra,
    });
    expect((await postForm(h, '/channels/twilio/status', status('delivered'))).statusCode).toBe(200);
    expect(
      (await postForm(h, '/channels/twilio/status', status('undelivered', { ErrorCode: '30003' }))).statusCode,
    ).toBe(200);
    expect((await postForm(h, '/channels/twilio/status', status('failed'), 'wrong')).statusCode).toBe(403);
    const records = await h.store.deliveries.listFor('out_5');
    expect(records.map((record) => record.status)).toEqual(['sent', 'delivered', 'undelivered']);
    expect(records[2]?.errorCode).toBe('30003');
  });
});
