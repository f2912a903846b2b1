/**
 * The real `promptpipe serve` with `PROMPTPIPE_CHANNEL=telegram` against the fake Telegram Bot API and the scripted
 * model, on the manual clock. Webhook mode: the server registers its webhook at start-up and Telegram's updates
 * reach it signed with the secret; a participant enrolled over the API opens the deep link (`/start <code>`), gets
 * the greeting that waited for it, completes intake, answers the daily Done poll natively (success_count 1); a forged
 * update is refused (401) and records nothing; blocking the bot withdraws the participant. Polling mode: the same
 * link and a conversation by long polling, on a laptop without a public URL. `stopServer` checks that no log line
 * holds the bot token or the webhook secret.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeTelegramBotApi, startFakeTelegramBotApi } from '../support/fake-telegram-bot-api.ts';
import { telegramUser } from '../support/fake-telegram-users.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { type ServerProcess, startServer, stopServer, waitFor } from '../support/server-process.ts';
import { COACH, createStudyCoach, SAID } from '../support/study-coach-script.ts';

const BOT_TOKEN = '7000000001:AAE2e-telegram-bot-token_secret';
const WEBHOOK_SECRET = 'e2e-telegram-webhook-secret';
const PUBLIC_URL = 'https://coach.example.org';

let stateDir = '';
let server: ServerProcess | undefined;
let telegram: FakeTelegramBotApi | undefined;
let model: ScriptedOpenAiServer | undefined;

afterEach(async () => {
  if (server && !server.exited) await stopServer(server, 10_000);
  server = undefined;
  await telegram?.close();
  await model?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 30_000);

async function startStudy(mode: 'webhook' | 'polling', unexpected: string[]): Promise<ServerProcess> {
  stateDir = await mkdtemp(join(tmpdir(), `promptpipe-telegram-${mode}-`));
  telegram = await startFakeTelegramBotApi({ token: BOT_TOKEN, webhookBase: () => server?.baseUrl ?? '' });
  model = await startScriptedOpenAiServer({ respond: createStudyCoach(unexpected) });
  server = await startServer({
    PATH: process.env.PATH ?? '',
    PROMPTPIPE_STATE_DIR: stateDir,
    LOG_LEVEL: 'info',
    PROMPTPIPE_CHANNEL: 'telegram',
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: '2026-03-02T14:00:00.000Z',
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'test',
    GENAI_MODEL: 'scripted',
    TELEGRAM_BOT_TOKEN: BOT_TOKEN,
    TELEGRAM_API_URL: telegram.url,
    TELEGRAM_MODE: mode,
    ...(mode === 'webhook' ? { TELEGRAM_WEBHOOK_SECRET: WEBHOOK_SECRET, PROMPTPIPE_PUBLIC_URL: PUBLIC_URL } : {}),
  });
  return server;
}

/** A JSON call to the server's API; the `result` of a 2xx answer. */
// biome-ignore lint/suspicious/noExplicitAny: JSON read loosely by the test
async function api(running: ServerProcess, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${running.baseUrl}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const json = (await response.json()) as { result?: unknown };
  expect(response.status, JSON.stringify(json)).toBeLessThan(300);
  return json.result;
}

function textsTo(fake: FakeTelegramBotApi, chatId: number): string[] {
  return fake.calls
    .filter((call) => call.method === 'sendMessage' && call.ok && call.body.chat_id === chatId)
    .map((call) => String(call.body.text));
}

describe('promptpipe serve with telegram', () => {
  it('runs a study day over the webhook: deep link, intake, a native Done poll answered, success_count 1; a forged update is refused; blocking withdraws', {
    timeout: 120_000,
  }, async () => {
    const unexpected: string[] = [];
    const running = await startStudy('webhook', unexpected);
    const fake = telegram as FakeTelegramBotApi;
    const until = <T>(what: string, check: () => T | Promise<T>) =>
      waitFor(what, async () => (await check()) || undefined, 30_000, [running]);
    expect(fake.webhook).toEqual({ url: `${PUBLIC_URL}/channels/telegram/webhook`, secret: WEBHOOK_SECRET });

    const ada = await api(running, 'POST', '/conversation/participants', {
      phone_number: '+15551230031',
      timezone: 'America/Toronto',
      channel: 'telegram',
    });
    expect(ada.telegram_link).toMatch(/^https:\/\/t\.me\/StudyCoachBot\?start=[A-Za-z0-9_-]+$/);
    const adaChat = telegramUser(fake, 4_100_031);
    // The greeting waits until Ada opens the link: a bot cannot write first.
    await until('the greeting generated', async () =>
      (await api(running, 'GET', `/conversation/participants/${ada.id}/history`)).some(
        (entry: { content: string }) => entry.content === COACH.greeting,
      ),
    );
    expect(textsTo(fake, adaChat.chatId)).toEqual([]);
    expect(await adaChat.pressStart(ada.telegram_link)).toBe(200);
    await until('the greeting in the chat', () => textsTo(fake, adaChat.chatId).includes(COACH.greeting));

    expect(await adaChat.says(SAID.habit)).toBe(200);
    await until('asked about timing', () => textsTo(fake, adaChat.chatId).includes(COACH.askTiming));
    expect(await adaChat.says(SAID.timing)).toBe(200);
    await until('all set', () => textsTo(fake, adaChat.chatId).includes(COACH.allSet));

    // The next morning: the daily prompt, then the Done poll as a native, non-anonymous Telegram poll.
    await api(running, 'POST', '/admin/clock', { set_to: '2026-03-03T13:50:00.000Z' });
    await until('the daily prompt', () => textsTo(fake, adaChat.chatId).includes(COACH.dailyPrompt));
    const donePoll = await until('the Done poll', () =>
      fake.calls.find((call) => call.method === 'sendPoll' && call.ok && call.body.question === 'Did you do it?'),
    );
    expect(donePoll.body).toMatchObject({
      chat_id: adaChat.chatId,
      options: [{ text: 'Done' }, { text: 'Next time' }],
      is_anonymous: false,
    });
    const pollId = await until('the poll id Telegram gave', () => pollIdOf(fake, donePoll.body.question));

    // Ada taps "Done": Telegram sends a poll_answer naming option 0.
    expect(await adaChat.votes(pollId, [0])).toBe(200);
    const state = await until('success_count 1', async () => {
      const current = await api(running, 'GET', `/conversation/participants/${ada.id}/state`);
      return current.profile?.success_count === 1 ? current : undefined;
    });
    expect(state.conversation_state).toBe('FEEDBACK');
    await until('the feedback reply', () => textsTo(fake, adaChat.chatId).includes(COACH.feedback));

    // A forged update (wrong secret): 401, and nothing of it is recorded.
    const historyBefore = (await api(running, 'GET', `/conversation/participants/${ada.id}/history?limit=1000`)).length;
    const forged = await fetch(`${running.baseUrl}/channels/telegram/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': 'not-the-secret' },
      body: JSON.stringify(adaChat.messageUpdate('forged: I did it ten times')),
    });
    expect(forged.status).toBe(401);
    const historyAfter = await api(running, 'GET', `/conversation/participants/${ada.id}/history?limit=1000`);
    expect(historyAfter).toHaveLength(historyBefore);
    expect(JSON.stringify(historyAfter)).not.toContain('forged');

    // Ada blocks the bot (Telegram does not say so this time): the next message is refused, and she is withdrawn.
    await adaChat.blocks({ silently: true });
    await api(running, 'POST', `/conversation/participants/${ada.id}/messages`, { text: 'Still with us?' });
    await until(
      'Ada withdrawn',
      async () => (await api(running, 'GET', `/conversation/participants/${ada.id}`)).status === 'withdrawn',
    );

    expect(fake.rejected).toEqual([]);
    expect(unexpected).toEqual([]);
    expect(await stopServer(running)).toEqual({ code: 0, signal: null });
  });

  it('works by long polling without a public URL: the deep link binds the chat and the coach answers', {
    timeout: 90_000,
  }, async () => {
    const unexpected: string[] = [];
    const running = await startStudy('polling', unexpected);
    const fake = telegram as FakeTelegramBotApi;
    const until = <T>(what: string, check: () => T | Promise<T>) =>
      waitFor(what, async () => (await check()) || undefined, 30_000, [running]);
    expect(fake.webhook).toBeUndefined();

    const ben = await api(running, 'POST', '/conversation/participants', {
      phone_number: '+15551230032',
      timezone: 'America/Toronto',
      channel: 'telegram',
    });
    const benChat = telegramUser(fake, 4_100_032);
    await benChat.pressStart(ben.telegram_link);
    await until('the greeting by long polling', () => textsTo(fake, benChat.chatId).includes(COACH.greeting));
    await benChat.says(SAID.habit);
    await until('the coach answers', () => textsTo(fake, benChat.chatId).includes(COACH.askTiming));
    // Each update was confirmed by the next getUpdates offset: Telegram forgets them.
    await fake.confirmed();

    expect(fake.rejected).toEqual([]);
    expect(unexpected).toEqual([]);
    expect(await stopServer(running)).toEqual({ code: 0, signal: null });
  });
});

/** Telegram's id of the poll the bot sent with this question (the fake's answer to sendPoll). */
function pollIdOf(fake: FakeTelegramBotApi, question: unknown): string | undefined {
  return fake.sentPolls.find((poll) => poll.question === question)?.id;
}
