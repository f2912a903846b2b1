/**
 * The real `promptpipe serve` with `PROMPTPIPE_CHANNEL=whatsapp-cloud,twilio`, each provider a local fake: a missing
 * setting is a start-up error naming it; Meta's handshake works; one participant per channel, enrolled over the API,
 * sends STOP through the provider's signed webhook and is withdrawn; WhatsApp gets one confirmation, Twilio SMS none
 * (Twilio answers STOP itself). And a study day on each channel: enrollment → intake → daily prompt with its poll
 * (WhatsApp reply buttons; numbered SMS text on Twilio) → the answer (a button reply; "1" by SMS) → success_count 1, with
 * signed webhooks both ways and delivery receipts recorded in the history.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type FakeTwilioApi, startFakeTwilioApi } from '../support/fake-twilio-api.ts';
import {
  type FakeWhatsAppCloudApi,
  startFakeWhatsAppCloudApi,
  whatsappWebhookBody,
} from '../support/fake-whatsapp-cloud-api.ts';
import {
  type ProviderAccounts,
  providerSettings,
  providerWebhooks,
  resultApi,
  scriptedStudySettings,
  stopProviderProcesses,
  textOf,
  untilTruthy,
} from '../support/provider-server.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import {
  describeOutput,
  freePort,
  type ServerProcess,
  spawnServer,
  startServer,
  stopServer,
  waitFor,
} from '../support/server-process.ts';
import { COACH, createStudyCoach, SAID } from '../support/study-coach-script.ts';

const ACCOUNT_SID = 'AC00000000000000000000000000000003';
const AUTH_TOKEN = 'e2e-twilio-token';
const ACCESS_TOKEN = 'EAAG-e2e';
const PHONE_NUMBER_ID = '1098765432';
const APP_SECRET = 'e2e-app-secret';
const PUBLIC_URL = 'https://coach.example.org';
const ACCOUNTS: ProviderAccounts = {
  accessToken: ACCESS_TOKEN,
  phoneNumberId: PHONE_NUMBER_ID,
  appSecret: APP_SECRET,
  verifyToken: 'verify',
  accountSid: ACCOUNT_SID,
  authToken: AUTH_TOKEN,
  twilioFrom: '+15550001111',
  publicUrl: PUBLIC_URL,
};

let stateDir = '';
let server: ServerProcess | undefined;
let whatsapp: FakeWhatsAppCloudApi | undefined;
let twilio: FakeTwilioApi | undefined;
let model: ScriptedOpenAiServer | undefined;

afterAll(() => stopProviderProcesses({ server, whatsapp, twilio, model, stateDir }), 30_000);

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
      ...providerSettings(ACCOUNTS, { whatsapp, twilio }),
    });
    const base = server.baseUrl;
    const webhooks = providerWebhooks(() => base, ACCOUNTS);

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

    const whatsappStop = await webhooks.whatsapp(
      whatsappWebhookBody({
        messages: [
          { from: '15551230011', id: 'wamid.STOP1', timestamp: '1772460000', type: 'text', text: { body: 'STOP' } },
        ],
      }),
    );
    expect(whatsappStop.status).toBe(200);

    const params = {
      MessageSid: 'SMSTOP1',
      AccountSid: ACCOUNT_SID,
      From: '+15551230012',
      To: '+15550001111',
      Body: 'stop',
    };
    const twilioStop = await webhooks.twilio('/channels/twilio/messages', params);
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

  it('runs a study day on each channel: intake, daily prompt with its poll, the answer, success_count 1, receipts', {
    timeout: 120_000,
  }, async () => {
    await stopProviderProcesses({ server, whatsapp, twilio, stateDir });
    const unexpected: string[] = [];
    stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-providers-day-'));
    whatsapp = await startFakeWhatsAppCloudApi({
      accessToken: ACCESS_TOKEN,
      phoneNumberId: PHONE_NUMBER_ID,
      templates: [{ name: 'study_message', language: 'en_US', bodyVariables: 1 }],
    });
    twilio = await startFakeTwilioApi({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
    model = await startScriptedOpenAiServer({ respond: createStudyCoach(unexpected) });
    server = await startServer({
      PATH: process.env.PATH ?? '',
      PROMPTPIPE_STATE_DIR: stateDir,
      LOG_LEVEL: 'warn',
      ...scriptedStudySettings(model, '2026-03-02T14:00:00.000Z'),
      ...providerSettings(ACCOUNTS, { whatsapp, twilio }),
      // The greeting opens the conversation outside the 24-hour window: it goes out as this template.
      WHATSAPP_CLOUD_TEMPLATE_NAME: 'study_message',
    });
    const running = server;
    const base = running.baseUrl;
    const meta = whatsapp;
    const sms = twilio;
    const api = resultApi(base);
    const until = untilTruthy(running);

    // Signed webhooks into PromptPipe, exactly as Meta and Twilio send them.
    const webhooks = providerWebhooks(() => base, ACCOUNTS);
    let wamid = 0;
    const postMeta = async (value: Parameters<typeof whatsappWebhookBody>[0]) => {
      const response = await webhooks.whatsapp(whatsappWebhookBody(value, PHONE_NUMBER_ID));
      expect(response.status).toBe(200);
    };
    const adaSays = (text: string) => {
      wamid += 1;
      return postMeta({
        messages: [
          { from: '15551230021', id: `wamid.DAY${wamid}`, timestamp: '1772460000', type: 'text', text: { body: text } },
        ],
      });
    };
    let sid = 0;
    const postTwilio = async (path: string, params: Record<string, string>) => {
      const response = await webhooks.twilio(path, params);
      expect(response.status).toBe(200);
    };
    const benSays = (text: string) => {
      sid += 1;
      return postTwilio('/channels/twilio/messages', {
        MessageSid: `SMDAY${sid}`,
        AccountSid: ACCOUNT_SID,
        From: '+15551230022',
        To: '+15550001111',
        Body: text,
        NumMedia: '0',
      });
    };
    const toAda = (text: string) => () => meta.accepted.find((m) => m.body.to === '15551230021' && textOf(m) === text);
    const toBen = (text: string) => () =>
      sms.accepted.find((m) => m.params.To === '+15551230022' && m.params.Body === text);

    const ada = await api('POST', '/conversation/participants', {
      phone_number: '+15551230021',
      timezone: 'America/Toronto',
      channel: 'whatsapp-cloud',
    });
    const ben = await api('POST', '/conversation/participants', {
      phone_number: '+15551230022',
      timezone: 'America/Toronto',
      channel: 'twilio',
    });
    expect((await until('the greeting as a WhatsApp template', toAda(COACH.greeting))).body.type).toBe('template');
    expect((await until('the greeting by SMS', toBen(COACH.greeting))).params.StatusCallback).toBe(
      `${PUBLIC_URL}/channels/twilio/status`,
    );

    // Intake, in two messages each.
    await adaSays(SAID.habit);
    await benSays(SAID.habit);
    await until('Ada asked about timing', toAda(COACH.askTiming));
    await until('Ben asked about timing', toBen(COACH.askTiming));
    await adaSays(SAID.timing);
    await benSays(SAID.timing);
    await until('Ada all set', toAda(COACH.allSet));
    await until('Ben all set', toBen(COACH.allSet));

    // The next morning: the daily prompt and its poll on each channel.
    await api('POST', '/admin/clock', { set_to: '2026-03-03T13:50:00.000Z' });
    const adaPrompt = await until("Ada's daily prompt", toAda(COACH.dailyPrompt));
    expect(adaPrompt.body.type).toBe('text');
    const adaPoll = await until('the Done poll as reply buttons', () =>
      meta.accepted.find((m) => m.body.to === '15551230021' && textOf(m) === 'Did you do it?'),
    );
    const buttons = (adaPoll.body.interactive as { action: { buttons: { reply: { id: string; title: string } }[] } })
      .action.buttons;
    expect(buttons.map((button) => button.reply.title)).toEqual(['Done', 'Next time']);
    await until("Ben's daily prompt", toBen(COACH.dailyPrompt));
    const benPoll = await until('the Done poll as numbered SMS', () =>
      sms.accepted.find((m) => m.params.To === '+15551230022' && m.params.Body?.includes('Did you do it?')),
    );
    expect(benPoll.params.Body).toMatch(/1.*Done.*2.*Next time/s);
    const benIntensity = await until('the intensity poll, numbered on', () =>
      sms.accepted.find((m) => m.params.To === '+15551230022' && m.params.Body?.includes("How's the intensity?")),
    );
    expect(benIntensity.params.Body).toContain('Reply 3 for Decrease, 4 for Keep current, 5 for Increase');

    // Receipts of the daily prompts, signed like the providers send them.
    await postMeta({
      statuses: [{ id: adaPrompt.id, status: 'delivered', timestamp: '1772546000', recipient_id: '15551230021' }],
    });
    const benPrompt = sms.accepted.find((m) => m.params.To === '+15551230022' && m.params.Body === COACH.dailyPrompt);
    await postTwilio('/channels/twilio/status', {
      MessageSid: benPrompt?.sid ?? '',
      MessageStatus: 'delivered',
      AccountSid: ACCOUNT_SID,
    });

    // The answers: a tap on the "Done" button; "1" by SMS (the intensity poll that follows is numbered on, 3–5, so
    // "1" can only be Done).
    wamid += 1;
    await postMeta({
      messages: [
        {
          from: '15551230021',
          id: `wamid.DAY${wamid}`,
          timestamp: '1772546100',
          type: 'interactive',
          interactive: { type: 'button_reply', button_reply: buttons[0]?.reply },
        },
      ],
    });
    await benSays('1');
    for (const participant of [ada, ben]) {
      const state = await until('success_count 1', async () => {
        const current = await api('GET', `/conversation/participants/${participant.id}/state`);
        return current.profile?.success_count === 1 ? current : undefined;
      });
      expect(state.conversation_state).toBe('FEEDBACK');
    }
    await until('Ada gets the feedback reply', toAda(COACH.feedback));
    await until('Ben gets the feedback reply', toBen(COACH.feedback));

    // The history shows each daily prompt as delivered on its channel.
    for (const [participant, channel] of [
      [ada, 'whatsapp-cloud'],
      [ben, 'twilio'],
    ] as const) {
      const history = (await api('GET', `/conversation/participants/${participant.id}/history?limit=1000`)) as {
        content: string;
        delivery?: { status: string; channel: string };
      }[];
      const prompt = history.find((entry) => entry.content === COACH.dailyPrompt);
      expect(prompt?.delivery).toMatchObject({ status: 'delivered', channel });
    }
    expect(meta.rejected).toEqual([]);
    expect(sms.rejected).toEqual([]);
    expect(unexpected).toEqual([]);
    expect(await stopServer(running)).toEqual({ code: 0, signal: null });
  });
});
