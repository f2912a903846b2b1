/**
 * The real `promptpipe serve` with `PROMPTPIPE_CHANNEL=whatsapp-cloud,twilio`, each provider a local fake: a missing
 * setting is a start-up error naming it; Meta's handshake works; one participant per channel, enrolled over the API,
 * sends STOP through the provider's signed webhook and is withdrawn; WhatsApp gets one confirmation, Twilio SMS none
 * (Twilio answers STOP itself).
 *
 * Not covered here (see the final report): the full intake → daily prompt → poll answer journey per channel.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signTwilioRequest } from '../../src/channels/twilio/twilio-signature.ts';
import { signWhatsAppBody } from '../../src/channels/whatsapp-cloud/whatsapp-cloud-signature.ts';
import { type FakeTwilioApi, startFakeTwilioApi } from '../support/fake-twilio-api.ts';
import {
  type FakeWhatsAppCloudApi,
  startFakeWhatsAppCloudApi,
  whatsappWebhookBody,
} from '../support/fake-whatsapp-cloud-api.ts';
import {
  describeOutput,
  freePort,
  type ServerProcess,
  spawnServer,
  startServer,
  stopServer,
  waitFor,
} from '../support/server-process.ts';

const ACCOUNT_SID = 'AC00000000000000000000000000000003';
const AUTH_TOKEN = 'e2e-twilio-token';
const ACCESS_TOKEN = 'EAAG-e2e';
const PHONE_NUMBER_ID = '1098765432';
const APP_SECRET = 'e2e-app-secret';
const PUBLIC_URL = 'https://coach.example.org';

let stateDir = '';
let server: ServerProcess | undefined;
let whatsapp: FakeWhatsAppCloudApi | undefined;
let twilio: FakeTwilioApi | undefined;

afterAll(async () => {
  if (server && !server.exited) await stopServer(server, 10_000);
  await whatsapp?.close();
  await twilio?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 30_000);

describe('promptpipe serve with whatsapp-cloud and twilio', () => {
  it('refuses to start without a required setting, naming it', { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'promptpipe-providers-missing-'));
    try {
      const refused = spawnServer({
        PATH: process.env.PATH ?? '',
        PROMPTPIPE_STATE_DIR: dir,
        API_ADDR: `127.0.0.1:${await freePort()}`,
        PROMPTPIPE_CHANNEL: 'whatsapp-cloud',
        WHATSAPP_CLOUD_ACCESS_TOKEN: ACCESS_TOKEN,
        WHATSAPP_CLOUD_PHONE_NUMBER_ID: PHONE_NUMBER_ID,
        WHATSAPP_CLOUD_VERIFY_TOKEN: 'verify',
      });
      const exit = await refused.exit;
      expect(exit.code, describeOutput(refused)).not.toBe(0);
      expect(describeOutput(refused)).toContain('WHATSAPP_CLOUD_APP_SECRET');
      expect(describeOutput(refused)).not.toContain(ACCESS_TOKEN);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('withdraws a participant on each channel who sends STOP through the signed webhook', {
    timeout: 90_000,
  }, async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-providers-'));
    whatsapp = await startFakeWhatsAppCloudApi({ accessToken: ACCESS_TOKEN, phoneNumberId: PHONE_NUMBER_ID });
    twilio = await startFakeTwilioApi({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
    server = await startServer({
      PATH: process.env.PATH ?? '',
      PROMPTPIPE_STATE_DIR: stateDir,
      LOG_LEVEL: 'warn',
      PROMPTPIPE_CHANNEL: 'whatsapp-cloud,twilio',
      WHATSAPP_CLOUD_ACCESS_TOKEN: ACCESS_TOKEN,
      WHATSAPP_CLOUD_PHONE_NUMBER_ID: PHONE_NUMBER_ID,
      WHATSAPP_CLOUD_APP_SECRET: APP_SECRET,
      WHATSAPP_CLOUD_VERIFY_TOKEN: 'verify',
      WHATSAPP_CLOUD_API_URL: whatsapp.url,
      TWILIO_ACCOUNT_SID: ACCOUNT_SID,
      TWILIO_AUTH_TOKEN: AUTH_TOKEN,
      TWILIO_FROM: '+15550001111',
      TWILIO_PUBLIC_URL: PUBLIC_URL,
      TWILIO_API_URL: twilio.url,
    });
    const base = server.baseUrl;

    const handshake = await fetch(
      `${base}/channels/whatsapp-cloud/webhook?hub.mode=subscribe&hub.verify_token=verify&hub.challenge=42`,
    );
    expect(handshake.status).toBe(200);
    expect(await handshake.text()).toBe('42');

    const enroll = async (phone: string, channel: string) => {
      const response = await fetch(`${base}/conversation/participants`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ phone_number: phone, name: 'Ada', channel }),
      });
      expect(response.status, await response.clone().text()).toBe(201);
      return ((await response.json()) as { result: { id: string; channel: string } }).result;
    };
    const onWhatsApp = await enroll('+15551230011', 'whatsapp-cloud');
    const onTwilio = await enroll('+15551230012', 'twilio');
    expect(onWhatsApp.channel).toBe('whatsapp-cloud');
    expect(onTwilio.channel).toBe('twilio');

    const raw = JSON.stringify(
      whatsappWebhookBody({
        messages: [
          { from: '15551230011', id: 'wamid.STOP1', timestamp: '1772460000', type: 'text', text: { body: 'STOP' } },
        ],
      }),
    );
    const whatsappStop = await fetch(`${base}/channels/whatsapp-cloud/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signWhatsAppBody(APP_SECRET, raw) },
      body: raw,
    });
    expect(whatsappStop.status).toBe(200);

    const params = {
      MessageSid: 'SMSTOP1',
      AccountSid: ACCOUNT_SID,
      From: '+15551230012',
      To: '+15550001111',
      Body: 'stop',
    };
    const path = '/channels/twilio/messages';
    const twilioStop = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': signTwilioRequest(AUTH_TOKEN, `${PUBLIC_URL}${path}`, params),
      },
      body: new URLSearchParams(params).toString(),
    });
    expect(twilioStop.status).toBe(200);
    expect(await twilioStop.text()).toContain('<Response/>');

    const status = async (id: string) =>
      ((await (await fetch(`${base}/conversation/participants/${id}`)).json()) as { result: { status: string } }).result
        .status;
    await waitFor(
      'both participants withdrawn',
      async () => (await status(onWhatsApp.id)) === 'withdrawn' && (await status(onTwilio.id)) === 'withdrawn',
      30_000,
      [server],
    );
    const fake = whatsapp;
    await waitFor(
      'the WhatsApp opt-out confirmation',
      async () =>
        fake.accepted.some(
          (message) =>
            message.body.to === '15551230011' && JSON.stringify(message.body).includes('You have been unsubscribed'),
        ),
      30_000,
      [server],
    );
    expect(whatsapp.rejected).toEqual([]);
    // Whatever else went out (the greeting), Twilio SMS got no opt-out confirmation from PromptPipe.
    expect(twilio.rejected).toEqual([]);
    expect(twilio.accepted.filter((message) => message.params.Body?.includes('You have been unsubscribed'))).toEqual(
      [],
    );
    expect(await stopServer(server)).toEqual({ code: 0, signal: null });
  });
});
