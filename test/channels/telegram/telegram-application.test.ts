/**
 * The telegram channel wired as in production (`createApplication`, no model configured), against the fake Bot API:
 * enrolment returns the deep link and messages wait for it; /stop and START; a participant who blocked the bot is
 * withdrawn by the failed delivery; Telegram's 429 holds a delivery as long as it asks.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OPTED_OUT_EVENT } from '../../../src/inbound/opt-out.ts';
import type { Application } from '../../../src/main.ts';
import { type FakeTelegramBotApi, startFakeTelegramBotApi } from '../../support/fake-telegram-bot-api.ts';
import type { Json } from '../../support/fake-telegram-shapes.ts';
import { type TelegramUser, telegramUser } from '../../support/fake-telegram-users.ts';
import { startTestApplication } from '../../support/test-application.ts';
import { waitUntil } from '../../support/wait-until.ts';

const TOKEN = '123456789:AAtelegram-application-token';
const SECRET = 'application-webhook-secret';
let api: FakeTelegramBotApi;
let app: Application;

beforeEach(async () => {
  api = await startFakeTelegramBotApi({ token: TOKEN });
  app = await startTestApplication({
    PROMPTPIPE_CHANNEL: 'telegram',
    PROMPTPIPE_PUBLIC_URL: 'https://coach.example.org',
    TELEGRAM_BOT_TOKEN: TOKEN,
    TELEGRAM_WEBHOOK_SECRET: SECRET,
    TELEGRAM_API_URL: api.url,
  });
});
afterEach(async () => {
  await app.stop();
  await api.close();
});

async function webhook(update: Json): Promise<number> {
  const response = await app.server.inject({
    method: 'POST',
    url: '/channels/telegram/webhook',
    headers: { 'x-telegram-bot-api-secret-token': SECRET },
    payload: update,
  });
  await app.inbound.idle();
  return response.statusCode;
}

async function call(method: 'GET' | 'POST' | 'PUT', url: string, payload?: Json): Promise<Json> {
  const response = await app.server.inject({ method, url, ...(payload ? { payload } : {}) });
  expect(response.statusCode, response.body).toBeLessThan(300);
  return response.json().result as Json;
}

const textsTo = (chatId: number) =>
  api.calls
    .filter((call) => call.method === 'sendMessage' && call.ok && Number(call.body.chat_id) === chatId)
    .map((call) => String(call.body.text));

/** Enrolled on telegram with their chat bound through the link enrolment returned; an organiser message waited. */
async function enrolledAndLinked(): Promise<{ id: string; user: TelegramUser }> {
  const enrolled = await call('POST', '/conversation/participants', {
    phone_number: '+15551230001',
    channel: 'telegram',
  });
  expect(enrolled.telegram_link).toMatch(/^https:\/\/t\.me\/StudyCoachBot\?start=/);
  const id = String(enrolled.id);
  await call('POST', `/conversation/participants/${id}/messages`, { text: 'Welcome to the study' });
  const user = telegramUser(api, 1001, { deliver: webhook });
  expect(textsTo(1001)).toEqual([]);
  expect(await user.pressStart(String(enrolled.telegram_link))).toBe(200);
  await waitUntil('the waiting message', () => textsTo(1001).includes('Welcome to the study'));
  return { id, user };
}

const statusOf = async (id: string) => (await call('GET', `/conversation/participants/${id}`)).status;

describe('the telegram channel in the application', () => {
  it('delivers what waited for the link, and withdraws on /stop and returns on START', async () => {
    const { id, user } = await enrolledAndLinked();
    await user.says('/stop');
    expect(await statusOf(id)).toBe('withdrawn');
    await waitUntil('the opt-out confirmation', () => textsTo(1001).some((text) => text.includes('unsubscribed')));
    await user.says('/start');
    expect(await statusOf(id)).toBe('active');
    expect(api.rejected).toEqual([]);
  });

  it('issues a new link on request, for telegram participants only', async () => {
    const { id } = await enrolledAndLinked();
    const issued = await call('POST', `/conversation/participants/${id}/telegram-link`);
    expect(issued).toMatchObject({ participant_id: id, linked: true });
    expect(issued.telegram_link).toMatch(/^https:\/\/t\.me\/StudyCoachBot\?start=/);
    const missing = await app.server.inject({ method: 'POST', url: '/conversation/participants/nobody/telegram-link' });
    expect(missing.statusCode).toBe(404);
  });

  it("shows a new one-time link on the dashboard's participant page", async () => {
    const { id } = await enrolledAndLinked();
    const page = await app.server.inject({ method: 'GET', url: `/dashboard/participants/${id}` });
    expect(page.statusCode).toBe(200);
    const link = /id="telegram-link" href="(https:\/\/t\.me\/StudyCoachBot\?start=[A-Za-z0-9_-]+)"/.exec(
      page.body,
    )?.[1];
    expect(link).toBeDefined();
    expect(page.body).toContain('chat linked');
    // The link works: opened from another Telegram account, it moves the participant's chat there.
    await telegramUser(api, 2002, { deliver: webhook }).pressStart(link);
    expect(await app.store.telegram.chatOf(id)).toBe('2002');
  });

  it('withdraws a participant who blocked the bot when a delivery is refused', async () => {
    const { id, user } = await enrolledAndLinked();
    await user.blocks({ silently: true });
    await call('POST', `/conversation/participants/${id}/messages`, { text: 'Are you there?' });
    await waitUntil('the opt-out', async () => (await statusOf(id)) === 'withdrawn');
    const [optedOut] = await app.store.events.list({ participantId: id, type: OPTED_OUT_EVENT });
    expect(optedOut?.data).toMatchObject({ channel: 'telegram', status_before: 'active' });
    expect(String(optedOut?.data.reason)).toContain('bot was blocked by the user');
    const history = (await call('GET', `/conversation/participants/${id}/history`)) as unknown as {
      content: string;
      delivery?: { status: string };
    }[];
    expect(history.find((entry) => entry.content === 'Are you there?')?.delivery?.status).toBe('failed');
  });

  it('withdraws a participant as soon as Telegram reports that they blocked the bot', async () => {
    const { id, user } = await enrolledAndLinked();
    const sentBefore = api.calls.length;
    expect(await user.blocks()).toBe(200);
    expect(await statusOf(id)).toBe('withdrawn');
    const [optedOut] = await app.store.events.list({ participantId: id, type: OPTED_OUT_EVENT });
    expect(optedOut?.data).toMatchObject({ channel: 'telegram', reason: 'blocked the bot' });
    // No confirmation: it could not reach them.
    expect(api.calls.slice(sentBefore)).toEqual([]);
  });

  it('holds a rate-limited delivery as long as Telegram asks, then sends it', async () => {
    const { id } = await enrolledAndLinked();
    api.failures.push({
      error_code: 429,
      description: 'Too Many Requests: retry after 30',
      parameters: { retry_after: 30 },
    });
    await call('POST', `/conversation/participants/${id}/messages`, { text: 'Slow down' });
    const held = await waitUntil('the held delivery', async () =>
      (await app.store.jobs.listPending({ participantId: id, kind: 'deliver_message' })).find(
        (job) => job.status === 'pending' && job.runAt.getTime() > app.clock.now().getTime(),
      ),
    );
    expect(held.runAt.getTime() - app.clock.now().getTime()).toBe(30_000);
    expect(held.attempts).toBe(0);
    expect(textsTo(1001)).not.toContain('Slow down');
    await call('POST', '/admin/clock', { advance_ms: 30_000 });
    await waitUntil('the message after the wait', () => textsTo(1001).includes('Slow down'));
  });
});
