/**
 * The telegram channel against the fake Bot API: deep-link binding, the fixed replies to chats it does not know,
 * native polls and their answers, blocking, Telegram's errors as the outbox needs them, and both ways of receiving.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryDeferredError, RecipientOptedOutError } from '../../../src/channels/channel.ts';
import { DELIVER_MESSAGE_JOB } from '../../../src/channels/outbox-messenger.ts';
import { TelegramNotLinkedError, telegramLinkWakeKey } from '../../../src/channels/telegram/held-deliveries.ts';
import { createTelegramBotApi } from '../../../src/channels/telegram/telegram-bot-api.ts';
import { createTelegramChannel } from '../../../src/channels/telegram/telegram-channel.ts';
import { START_CODE_LIFETIME_MS } from '../../../src/channels/telegram/telegram-links.ts';
import type { Participant } from '../../../src/domain/participant.ts';
import { createBuiltInMessageCatalogue } from '../../../src/i18n/built-in-catalogues.ts';
import { silentLog } from '../../../src/observability/log.ts';
import { telegramUser } from '../../support/fake-telegram-users.ts';
import { waitUntil } from '../../support/wait-until.ts';
import { PUBLIC_URL, startTelegramHarness, type TelegramHarness, WEBHOOK_SECRET } from './telegram-harness.ts';

const english = createBuiltInMessageCatalogue();
let telegram: TelegramHarness | undefined;
afterEach(async () => {
  await telegram?.close();
  telegram = undefined;
});

async function setUp(mode: 'webhook' | 'polling' = 'webhook') {
  telegram = await startTelegramHarness({ mode });
  const current = telegram;
  const user = (chatId: number, languageCode = 'en') =>
    telegramUser(current.api, chatId, {
      languageCode,
      ...(mode === 'webhook' ? { deliver: (update) => current.post(update) } : {}),
    });
  return { ...current, user };
}

/** The texts Telegram accepted for this chat. */
function textsTo(telegramHarness: TelegramHarness, chatId: number): string[] {
  return telegramHarness.api.calls
    .filter((call) => call.method === 'sendMessage' && call.ok && Number(call.body.chat_id) === chatId)
    .map((call) => String(call.body.text));
}

function outbound(participant: Participant, overrides: Record<string, unknown> = {}) {
  return {
    id: 'out_1',
    participantId: participant.id,
    to: participant.phoneNumber,
    kind: 'text' as const,
    text: 'Time for your walk',
    ...overrides,
  };
}

describe('the telegram channel', () => {
  it('binds a chat by its one-time deep link, once, and says so when nothing was waiting', async () => {
    const { harness, channel, api, user } = await setUp();
    const ada = await harness.enroll('+15551230001');
    const link = await channel.linkFor(ada.id);
    expect(link).toMatch(/^https:\/\/t\.me\/StudyCoachBot\?start=[A-Za-z0-9_-]{22}$/);
    expect(await user(1001).pressStart(link)).toBe(200);
    expect(await harness.store.telegram.chatOf(ada.id)).toBe('1001');
    expect(textsTo(telegram as TelegramHarness, 1001)).toEqual([english.t('en', 'telegram.linked')]);

    // The same link from another account binds nothing: it was used up.
    expect(await user(1002, 'es').pressStart(link)).toBe(200);
    expect(await harness.store.telegram.participantOfChat('1002')).toBeUndefined();
    expect(textsTo(telegram as TelegramHarness, 1002)).toEqual([english.t('es', 'telegram.linkInvalid')]);
    expect(api.rejected).toEqual([]);
  });

  it('refuses an expired link', async () => {
    const { harness, channel, user } = await setUp();
    const ada = await harness.enroll('+15551230001');
    const link = await channel.linkFor(ada.id);
    harness.clock.advance(START_CODE_LIFETIME_MS);
    await user(1001).pressStart(link);
    expect(await harness.store.telegram.chatOf(ada.id)).toBeUndefined();
    expect(textsTo(telegram as TelegramHarness, 1001)).toEqual([english.t('en', 'telegram.linkInvalid')]);
  });

  it('answers a chat it does not know with one fixed reply and records nothing', async () => {
    const { harness, user } = await setUp();
    await harness.enroll('+15551230001');
    expect(await user(2002).says('hello?')).toBe(200);
    await harness.inbound.idle();
    expect(textsTo(telegram as TelegramHarness, 2002)).toEqual([english.t('en', 'telegram.unknownChat')]);
    expect(harness.flow.messages).toEqual([]);
    expect(await harness.store.inbound.listUnprocessed()).toEqual([]);
    expect((await harness.store.events.list()).map((event) => event.type)).toEqual(['participant-enrolled']);
  });

  it("hands a bound chat's messages on as the participant's, /stop included, each once", async () => {
    const { harness, channel, user } = await setUp();
    const ada = await harness.enroll('+15551230001');
    const adaChat = user(1001);
    await adaChat.pressStart(await channel.linkFor(ada.id));
    const update = adaChat.messageUpdate('I walked today');
    expect(await telegram?.post(update)).toBe(200);
    expect(await telegram?.post(update)).toBe(200);
    await adaChat.says('/stop@StudyCoachBot');
    await harness.inbound.idle();
    expect(harness.flow.messages.map((message) => [message.participantId, message.text])).toEqual([
      [ada.id, 'I walked today'],
      [ada.id, '/stop'],
    ]);
  });

  it('answers a wrong or missing webhook secret 401 and reads nothing', async () => {
    const { harness, channel, user } = await setUp();
    const ada = await harness.enroll('+15551230001');
    const adaChat = user(1001);
    await adaChat.pressStart(await channel.linkFor(ada.id));
    expect(await telegram?.post(adaChat.messageUpdate('forged'), 'wrong-secret')).toBe(401);
    const missing = await harness.call('POST', '/channels/telegram/webhook', adaChat.messageUpdate('forged'));
    expect(missing.statusCode).toBe(401);
    await harness.inbound.idle();
    expect(harness.flow.messages).toEqual([]);
  });

  it('sends polls as native non-anonymous polls and turns their answers into structured answers', async () => {
    const { harness, channel, api, user } = await setUp();
    const ada = await harness.enroll('+15551230001');
    const adaChat = user(1001);
    await adaChat.pressStart(await channel.linkFor(ada.id));
    await channel.send(
      outbound(ada, {
        id: 'out_poll',
        kind: 'poll',
        text: "How's the intensity?",
        poll: { id: 'out_poll', question: "How's the intensity?", options: ['Decrease', 'Keep current', 'Increase'] },
      }),
    );
    const sendPoll = api.calls.find((call) => call.method === 'sendPoll');
    expect(sendPoll?.body).toMatchObject({
      chat_id: 1001,
      question: "How's the intensity?",
      options: [{ text: 'Decrease' }, { text: 'Keep current' }, { text: 'Increase' }],
      is_anonymous: false,
      allows_multiple_answers: false,
    });
    const pollId = (await harness.store.telegram.sentByOutboundId('out_poll'))?.poll?.pollId ?? '';
    expect(pollId).not.toBe('');

    await user(3003).votes(pollId, [0]); // someone else, on a forwarded poll
    await adaChat.votes(pollId, []); // a vote withdrawn
    await adaChat.votes(pollId, [2]);
    await harness.inbound.idle();
    expect(harness.flow.messages.map((message) => message.pollAnswer)).toEqual([
      { pollId: 'out_poll', question: "How's the intensity?", option: 'Increase', optionIndex: 2 },
    ]);
  });

  it('reports a participant who blocks the bot', async () => {
    const { harness, channel, user, blocked } = await setUp();
    const ada = await harness.enroll('+15551230001');
    const adaChat = user(1001);
    await adaChat.pressStart(await channel.linkFor(ada.id));
    expect(await adaChat.blocks()).toBe(200);
    expect(blocked).toEqual([ada.id]);
  });

  it("gives the outbox Telegram's errors as it needs them, and never sends one message twice", async () => {
    const { harness, channel, api, user } = await setUp();
    const ada = await harness.enroll('+15551230001');
    await expect(channel.send(outbound(ada))).rejects.toMatchObject({
      constructor: TelegramNotLinkedError,
      wakeOn: telegramLinkWakeKey(ada.id),
    });
    await user(1001).pressStart(await channel.linkFor(ada.id));

    api.failures.push({
      error_code: 429,
      description: 'Too Many Requests: retry after 3',
      parameters: { retry_after: 3 },
    });
    const limited = await channel.send(outbound(ada)).catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(DeliveryDeferredError);
    expect((limited as DeliveryDeferredError).deliveryHoldMs).toBe(3000);

    const first = await channel.send(outbound(ada));
    const again = await channel.send(outbound(ada));
    expect(again).toEqual(first);
    expect(textsTo(telegram as TelegramHarness, 1001).filter((text) => text === 'Time for your walk')).toHaveLength(1);

    const long = `${'word '.repeat(800)}\n${'more '.repeat(200)}`;
    await channel.send(outbound(ada, { id: 'out_long', text: long }));
    const parts = textsTo(telegram as TelegramHarness, 1001).slice(-2);
    expect(parts.map((part) => part.length <= 4096)).toEqual([true, true]);
    // Cut at a line break: nothing lost but that break.
    expect(parts.join('\n')).toBe(long);

    api.blocked.add(1001);
    await expect(channel.send(outbound(ada, { id: 'out_2' }))).rejects.toBeInstanceOf(RecipientOptedOutError);
    expect(api.rejected).toEqual([]);
  });

  it('wakes the deliveries held for a participant when their chat is bound', async () => {
    const { harness, channel, user } = await setUp();
    const ada = await harness.enroll('+15551230001');
    const now = harness.clock.now();
    const job = await harness.store.jobs.enqueue(
      { id: 'job_held', kind: DELIVER_MESSAGE_JOB, participantId: ada.id, runAt: now, payload: {} },
      now,
    );
    await harness.store.jobs.claimDue({ now, owner: 'test', leaseMs: 60_000, limit: 1 });
    const later = new Date(now.getTime() + 3_600_000);
    await harness.store.jobs.hold(job.id, { until: later, now, wakeOn: telegramLinkWakeKey(ada.id) });

    await user(1001).pressStart(await channel.linkFor(ada.id));
    const [woken] = await harness.store.jobs.listPending({ participantId: ada.id, kind: DELIVER_MESSAGE_JOB });
    expect(woken?.runAt).toEqual(now);
    // Something was waiting: the greeting is the confirmation, no "connected" notice.
    expect(textsTo(telegram as TelegramHarness, 1001)).toEqual([]);
  });

  it('refuses to start with a token Telegram does not know, naming the setting and not the token', async () => {
    const { harness, api } = await setUp();
    const wrong = createTelegramChannel({
      api: createTelegramBotApi({ token: '999:not-the-token', apiUrl: api.url, timeoutMs: 5_000 }),
      mode: 'polling',
      webhookSecret: undefined,
      publicUrl: undefined,
      store: harness.store,
      clock: harness.clock,
      log: silentLog,
      messages: english,
      onJobEnqueued: () => {},
    });
    const failure = await wrong.start?.().catch((error: unknown) => error as Error);
    expect(failure?.message).toContain('TELEGRAM_BOT_TOKEN');
    expect(failure?.message).toContain('401');
    expect(failure?.message).not.toContain('not-the-token');
  });

  it('registers its webhook with the secret at start-up', async () => {
    const { api } = await setUp();
    expect(api.webhook).toEqual({ url: `${PUBLIC_URL}/channels/telegram/webhook`, secret: WEBHOOK_SECRET });
    const setWebhook = api.calls.find((call) => call.method === 'setWebhook');
    expect(setWebhook?.body.allowed_updates).toEqual(['message', 'poll_answer', 'my_chat_member']);
  });

  it('receives by long polling, confirming each update once it is handled', async () => {
    const { harness, channel, api, user } = await setUp('polling');
    expect(api.calls.map((call) => call.method).slice(0, 2)).toEqual(['getMe', 'deleteWebhook']);
    const ada = await harness.enroll('+15551230001');
    const adaChat = user(1001);
    await adaChat.pressStart(await channel.linkFor(ada.id));
    await adaChat.says('Hello from a laptop');
    await api.confirmed();
    await waitUntil('the message handed on', () => harness.flow.messages.length === 1);
    expect(harness.flow.messages[0]?.text).toBe('Hello from a laptop');
    expect(await harness.store.telegram.chatOf(ada.id)).toBe('1001');
  });
});
