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
import { signWhatsAppBody } from '../../src/channels/whatsapp-cloud/whatsapp-cloud-signature.ts';
import { type FakeTwilioApi, startFakeTwilioApi } from '../support/fake-twilio-api.ts';
import {
  type FakeWhatsAppCloudApi,
  startFakeWhatsAppCloudApi,
  whatsappWebhookBody,
} from '../support/fake-whatsapp-cloud-api.ts';
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
import { signTwilioRequest } from '../support/twilio-signing.ts';

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
let model: ScriptedOpenAiServer | undefined;

afterAll(async () => {
  if (server && !server.exited) await stopServer(server, 10_000);
  await whatsapp?.close();
  await twilio?.close();
  await model?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 30_000);

/** The participant-visible text of a message the fake Cloud API accepted (text, buttons or template). */
function whatsappText(body: Record<string, unknown>): string {
  const text = body.text as { body?: string } | undefined;
  const interactive = body.interactive as { body?: { text?: string } } | undefined;
  const template = body.template as { components?: { parameters?: { text?: string }[] }[] } | undefined;
  return text?.body ?? interactive?.body?.text ?? template?.components?.[0]?.parameters?.[0]?.text ?? '';
}

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

  it('runs a study day on each channel: intake, daily prompt with its poll, the answer, success_count 1, receipts', {
    timeout: 120_000,
  }, async () => {
    if (server && !server.exited) await stopServer(server, 10_000);
    await whatsapp?.close();
    await twilio?.close();
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
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
      PROMPTPIPE_CHANNEL: 'whatsapp-cloud,twilio',
      PROMPTPIPE_CLOCK: 'manual',
      PROMPTPIPE_CLOCK_START: '2026-03-02T14:00:00.000Z',
      OPENAI_BASE_URL: model.baseUrl,
      OPENAI_API_KEY: 'test',
      GENAI_MODEL: 'scripted',
      WHATSAPP_CLOUD_ACCESS_TOKEN: ACCESS_TOKEN,
      WHATSAPP_CLOUD_PHONE_NUMBER_ID: PHONE_NUMBER_ID,
      WHATSAPP_CLOUD_APP_SECRET: APP_SECRET,
      WHATSAPP_CLOUD_VERIFY_TOKEN: 'verify',
      WHATSAPP_CLOUD_API_URL: whatsapp.url,
      // The greeting opens the conversation outside the 24-hour window: it goes out as this template.
      WHATSAPP_CLOUD_TEMPLATE_NAME: 'study_message',
      TWILIO_ACCOUNT_SID: ACCOUNT_SID,
      TWILIO_AUTH_TOKEN: AUTH_TOKEN,
      TWILIO_FROM: '+15550001111',
      TWILIO_PUBLIC_URL: PUBLIC_URL,
      TWILIO_API_URL: twilio.url,
    });
    const running = server;
    const base = running.baseUrl;
    const meta = whatsapp;
    const sms = twilio;
    // biome-ignore lint/suspicious/noExplicitAny: JSON read loosely by the test
    const api = async (method: string, path: string, body?: unknown): Promise<any> => {
      const response = await fetch(`${base}${path}`, {
        method,
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      const json = (await response.json()) as { result?: unknown };
      expect(response.status, JSON.stringify(json)).toBeLessThan(300);
      return json.result;
    };
    const until = <T>(what: string, check: () => T | Promise<T>) =>
      waitFor(what, async () => (await check()) || undefined, 30_000, [running]);

    // Signed webhooks into PromptPipe, exactly as Meta and Twilio send them.
    let wamid = 0;
    const postMeta = async (value: Parameters<typeof whatsappWebhookBody>[0]) => {
      const raw = JSON.stringify(whatsappWebhookBody(value, PHONE_NUMBER_ID));
      const response = await fetch(`${base}/channels/whatsapp-cloud/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': signWhatsAppBody(APP_SECRET, raw) },
        body: raw,
      });
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
      const response = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': signTwilioRequest(AUTH_TOKEN, `${PUBLIC_URL}${path}`, params),
        },
        body: new URLSearchParams(params).toString(),
      });
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
    const toAda = (text: string) => () =>
      meta.accepted.find((m) => m.body.to === '15551230021' && whatsappText(m.body) === text);
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
      meta.accepted.find((m) => m.body.to === '15551230021' && whatsappText(m.body) === 'Did you do it?'),
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
