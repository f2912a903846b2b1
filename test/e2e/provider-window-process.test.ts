/**
 * The real `promptpipe serve` on the WhatsApp Cloud API and on WhatsApp through Twilio, each provider a strict local
 * fake that keeps the 24-hour window as the provider does (a free-form message outside it is accepted, then failed in
 * a status webhook: 131047; 63016), with the manual clock running two silent days.
 *
 * - Ada (Cloud API) and Ben (Twilio) say nothing after intake: day three's prompt goes as ONE template whose one-line
 *   variable carries the prompt and both polls' options, numbered; nothing free-form is tried.
 * - Cara (Cloud API) and Dan (Twilio) have been silent as long for the provider, but PromptPipe received their last
 *   message a day late (a webhook redelivered after an outage), so it reckons the window open and sends day three's
 *   prompt and polls free-form: accepted, then failed by the provider's status; PromptPipe sends them again as one
 *   template with the options.
 * - Each answers "1", numbered as on SMS: Done, success_count 1.
 */
import { mkdtemp } from 'node:fs/promises';
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
import { type ServerProcess, startServer, stopServer } from '../support/server-process.ts';
import { COACH, createStudyCoach, SAID } from '../support/study-coach-script.ts';

const ACCOUNT_SID = 'AC00000000000000000000000000000004';
const AUTH_TOKEN = 'e2e-window-twilio-token';
const ACCESS_TOKEN = 'EAAG-e2e-window';
const PHONE_NUMBER_ID = '1098765433';
const APP_SECRET = 'e2e-window-app-secret';
const VERIFY_TOKEN = 'e2e-window-verify';
const PUBLIC_URL = 'https://coach.example.org';
const SENDER = 'whatsapp:+15550001111';
const CONTENT_SID = `HX${'5'.repeat(32)}`;
const ACCOUNTS: ProviderAccounts = {
  accessToken: ACCESS_TOKEN,
  phoneNumberId: PHONE_NUMBER_ID,
  appSecret: APP_SECRET,
  verifyToken: VERIFY_TOKEN,
  accountSid: ACCOUNT_SID,
  authToken: AUTH_TOKEN,
  twilioFrom: SENDER,
  publicUrl: PUBLIC_URL,
};
const DAY_ONE = '2026-03-02T14:00:00.000Z';
const DAY_TWO_PROMPT = '2026-03-03T13:50:00.000Z';
const LATE_DELIVERY = '2026-03-03T14:30:00.000Z';
const WRITTEN_DAY_ONE = '2026-03-02T14:05:00.000Z';
const DAY_THREE_PROMPT = '2026-03-04T13:50:00.000Z';
const DONE_OPTIONS = 'Did you do it? Reply 1 for Done, 2 for Next time.';
const INTENSITY_OPTIONS = "How's the intensity? Reply 3 for Decrease, 4 for Keep current, 5 for Increase";

type Channel = 'whatsapp-cloud' | 'twilio';
const PEOPLE = {
  ada: { phone: '+15551230031', channel: 'whatsapp-cloud' as Channel },
  ben: { phone: '+15551230032', channel: 'twilio' as Channel },
  cara: { phone: '+15551230033', channel: 'whatsapp-cloud' as Channel },
  dan: { phone: '+15551230034', channel: 'twilio' as Channel },
};
type Person = keyof typeof PEOPLE;

let stateDir = '';
let server: ServerProcess | undefined;
let meta: FakeWhatsAppCloudApi | undefined;
let twilio: FakeTwilioApi | undefined;
let model: ScriptedOpenAiServer | undefined;

afterAll(() => stopProviderProcesses({ server, whatsapp: meta, twilio, model, stateDir }), 30_000);

describe('promptpipe serve outside the WhatsApp window, Cloud API and Twilio', () => {
  it('sends day three’s prompt with its poll options in one template, also after a 131047 / 63016 status', {
    timeout: 180_000,
  }, async () => {
    const unexpected: string[] = [];
    let providerNow = new Date(DAY_ONE);
    stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-window-'));
    model = await startScriptedOpenAiServer({ respond: createStudyCoach(unexpected) });
    let base = '';
    const webhooks = providerWebhooks(() => base, ACCOUNTS);
    const postMeta = async (body: Record<string, unknown>) => {
      const response = await webhooks.whatsapp(body);
      expect(response.status).toBe(200);
    };
    const postTwilio = async (path: string, params: Record<string, string>) => {
      const response = await webhooks.twilio(path, params);
      expect(response.status).toBe(200);
    };
    meta = await startFakeWhatsAppCloudApi({
      accessToken: ACCESS_TOKEN,
      phoneNumberId: PHONE_NUMBER_ID,
      templates: [{ name: 'study_message', language: 'en_US', bodyVariables: 1 }],
      window: { now: () => providerNow, statuses: postMeta },
    });
    twilio = await startFakeTwilioApi({
      accountSid: ACCOUNT_SID,
      authToken: AUTH_TOKEN,
      contentTemplates: [{ sid: CONTENT_SID, variables: ['1'] }],
      window: { now: () => providerNow, statusCallback: (params) => postTwilio('/channels/twilio/status', params) },
    });
    const cloud = meta;
    const sms = twilio;
    server = await startServer({
      PATH: process.env.PATH ?? '',
      PROMPTPIPE_STATE_DIR: stateDir,
      LOG_LEVEL: 'warn',
      ...scriptedStudySettings(model, DAY_ONE),
      ...providerSettings(ACCOUNTS, { whatsapp: cloud, twilio: sms }),
      WHATSAPP_CLOUD_TEMPLATE_NAME: 'study_message',
      TWILIO_CONTENT_SID_TEXT: CONTENT_SID,
    });
    const running = server;
    base = running.baseUrl;
    const until = untilTruthy(running);
    const api = resultApi(base);
    const setClock = async (at: string) => {
      providerNow = new Date(at);
      await api('POST', '/admin/clock', { set_to: at });
    };

    let inboundCounter = 0;
    /** The person writes `text`, dated `writtenAt` by the provider (and by its window). */
    const says = async (person: Person, text: string, writtenAt = providerNow) => {
      const { phone, channel } = PEOPLE[person];
      inboundCounter += 1;
      if (channel === 'whatsapp-cloud') {
        cloud.customerWrote(phone.slice(1), writtenAt);
        const timestamp = String(Math.floor(writtenAt.getTime() / 1000));
        const message = {
          from: phone.slice(1),
          id: `wamid.IN${inboundCounter}`,
          timestamp,
          type: 'text',
          text: { body: text },
        };
        return postMeta(whatsappWebhookBody({ messages: [message] }, PHONE_NUMBER_ID));
      }
      sms.customerWrote(phone, writtenAt);
      return postTwilio('/channels/twilio/messages', {
        MessageSid: `SMIN${inboundCounter}`,
        AccountSid: ACCOUNT_SID,
        From: `whatsapp:${phone}`,
        To: SENDER,
        Body: text,
        NumMedia: '0',
      });
    };
    /** What reached the person (accepted and not failed), or was accepted and failed outside the window. */
    const received = (person: Person, list: 'accepted' | 'failedOutsideWindow' = 'accepted') => {
      const { phone, channel } = PEOPLE[person];
      return channel === 'whatsapp-cloud'
        ? cloud[list]
            .filter((message) => message.body.to === phone.slice(1))
            .map((message) => ({ text: textOf(message), template: message.body.type === 'template' }))
        : sms[list]
            .filter((message) => message.params.To === `whatsapp:${phone}`)
            .map((message) => ({ text: textOf(message), template: message.params.ContentSid !== undefined }));
    };
    const ids: Record<string, string> = {};
    /** The newest history entry with this content, as the API shows it (with its delivery status). */
    const latestEntry = async (person: Person, content: string) => {
      const history = (await api('GET', `/conversation/participants/${ids[person]}/history?limit=1000`)) as {
        content: string;
        delivery?: { status: string };
      }[];
      return history.findLast((entry) => entry.content.startsWith(content));
    };

    for (const [person, { phone, channel }] of Object.entries(PEOPLE)) {
      ids[person] = (
        await api('POST', '/conversation/participants', { phone_number: phone, timezone: 'America/Toronto', channel })
      ).id;
    }
    for (const person of Object.keys(PEOPLE) as Person[]) {
      // They never wrote: the greeting is a template.
      await until(`${person}'s greeting`, () => received(person).find((m) => m.template && m.text === COACH.greeting));
      await says(person, SAID.habit);
      await until(`${person} asked about timing`, () => received(person).find((m) => m.text === COACH.askTiming));
      await says(person, SAID.timing);
      await until(`${person} all set`, () => received(person).find((m) => m.text === COACH.allSet));
    }

    await setClock(DAY_TWO_PROMPT);
    for (const person of Object.keys(PEOPLE) as Person[]) {
      const prompt = await until(`${person}'s day-two prompt`, () =>
        received(person).find((m) => m.text === COACH.dailyPrompt),
      );
      expect(prompt.template).toBe(false);
    }

    // Cara's and Dan's day-one message reaches PromptPipe only now.
    await setClock(LATE_DELIVERY);
    for (const person of ['cara', 'dan'] as const)
      await says(person, 'Sorry, my phone was off', new Date(WRITTEN_DAY_ONE));

    await setClock(DAY_THREE_PROMPT);
    for (const person of ['cara', 'dan'] as const) {
      // Tried free-form (PromptPipe reckons the window open), accepted, recorded as sent; then the status comes.
      await until(`${person}'s day-three prompt and polls tried free-form`, async () => {
        const tried = received(person, 'failedOutsideWindow').map((m) => m.text);
        if (!tried.includes(COACH.dailyPrompt) || !tried.some((text) => text.includes("How's the intensity?")))
          return false;
        return (await latestEntry(person, "How's the intensity?"))?.delivery?.status === 'sent';
      });
    }
    await cloud.flushStatuses();
    await sms.flushStatuses();

    for (const person of Object.keys(PEOPLE) as Person[]) {
      const template = await until(`${person}'s day-three template`, () =>
        received(person).find((m) => m.template && m.text.startsWith(COACH.dailyPrompt)),
      );
      // One line: the prompt, then each poll with its options numbered on.
      expect(template.text).toBe(`${COACH.dailyPrompt} ${DONE_OPTIONS} ${INTENSITY_OPTIONS}`);
      expect(received(person).filter((m) => m.template && m.text.includes(COACH.dailyPrompt))).toHaveLength(1);
      const triedFreeForm = received(person, 'failedOutsideWindow').some((m) => m.text === COACH.dailyPrompt);
      expect(triedFreeForm, person).toBe(person === 'cara' || person === 'dan');
    }
    expect((await latestEntry('cara', COACH.dailyPrompt))?.delivery?.status).toBe('sent');

    // The answer is the option's number, as on SMS.
    for (const person of Object.keys(PEOPLE) as Person[]) await says(person, '1');
    for (const person of Object.keys(PEOPLE) as Person[]) {
      await until(`${person}'s success_count 1`, async () => {
        const state = await api('GET', `/conversation/participants/${ids[person]}/state`);
        return state.profile?.success_count === 1;
      });
    }
    expect(cloud.rejected).toEqual([]);
    expect(sms.rejected).toEqual([]);
    expect(unexpected).toEqual([]);
    expect(await stopServer(running)).toEqual({ code: 0, signal: null });
  });
});
