/**
 * The channel contract (channel-contract.ts) against the telegram channel, on grammY against the fake Bot API; the
 * inbound side through the real webhook route. Telegram knows chats, not phone numbers: each participant's chat is
 * bound first by the real deep-link flow (`/start <code>`), and the fake's chat ids stand for the contract's numbers.
 */
import { expect } from 'vitest';
import { START } from '../../support/api-harness.ts';
import { telegramUser } from '../../support/fake-telegram-users.ts';
import { participantFixture } from '../../support/participant-fixture.ts';
import { CONTRACT_RETRY_AFTER_SECONDS, describeChannelContract } from '../channel-contract.ts';
import { startTelegramHarness } from './telegram-harness.ts';

/** The contract's participant `p_1` (its send cases) reads at this number, in this chat. */
const CONTRACT_PHONE = '+15551230001';
const SEND_CHAT = 4_242;

describeChannelContract(
  'telegram',
  async () => {
    const telegram = await startTelegramHarness();
    const { harness, api, channel } = telegram;
    const phoneOfChat = new Map<number, string>([[SEND_CHAT, CONTRACT_PHONE]]);
    // `p_1` is a row of its own (another number, so the inbound cases can enrol the contract's), its chat bound.
    await harness.store.participants.create(participantFixture('p_1', '+15559990001', START, { channel: 'telegram' }));
    await harness.store.telegram.linkChat('p_1', String(SEND_CHAT), START);
    api.started.add(SEND_CHAT);

    const users = new Map<string, ReturnType<typeof telegramUser>>();
    /** The participant of this number, with their chat bound through their deep link. */
    async function userOf(phone: string) {
      const known = users.get(phone);
      if (known) return known;
      const participant = await harness.participants.findByPhone(phone);
      if (!participant) throw new Error(`nobody enrolled with ${phone}`);
      const chatId = 800_000 + users.size;
      const user = telegramUser(api, chatId, { deliver: (update) => telegram.post(update) });
      phoneOfChat.set(chatId, phone);
      expect(await user.pressStart(await channel.linkFor(participant.id))).toBe(200);
      users.set(phone, user);
      return user;
    }
    /** The update of each provider id, built once: posting it again is Telegram delivering it twice. */
    const updates = new Map<string, Record<string, unknown>>();

    return {
      channel,
      delivered: () =>
        api.calls
          .filter((call) => call.method === 'sendMessage' || call.method === 'sendPoll')
          .map(({ body }) => ({
            to: phoneOfChat.get(Number(body.chat_id)) ?? String(body.chat_id),
            text: String(body.text ?? body.question),
            ...(body.options ? { options: (body.options as { text: string }[]).map((option) => option.text) } : {}),
          })),
      failNext: (kind) => {
        if (kind === 'blocked') api.blocked.add(SEND_CHAT);
        else if (kind === 'rate-limited') {
          api.failures.push({
            error_code: 429,
            description: `Too Many Requests: retry after ${CONTRACT_RETRY_AFTER_SECONDS}`,
            parameters: { retry_after: CONTRACT_RETRY_AFTER_SECONDS },
          });
        } else if (kind === 'retryable') api.failures.push({ error_code: 502, description: 'Bad Gateway' });
        else api.failures.push({ error_code: 400, description: 'Bad Request: message is too long' });
      },
      inbound: {
        harness,
        async postText(from, text, providerId, options) {
          const user = await userOf(from);
          const update = updates.get(providerId) ?? user.messageUpdate(text);
          updates.set(providerId, update);
          return telegram.post(update, options?.badSignature ? 'not-the-secret' : undefined);
        },
        // A native poll: sent to the participant first (its Telegram poll id stored), then their vote.
        async postPollAnswer(from, pollId, index, option) {
          const user = await userOf(from);
          const participant = await harness.participants.findByPhone(from);
          await channel.send({
            id: pollId,
            participantId: participant?.id ?? '',
            to: from,
            kind: 'poll',
            text: 'Did you do it?',
            poll: { id: pollId, question: 'Did you do it?', options: [option, 'Next time'] },
          });
          const sent = await harness.store.telegram.sentByOutboundId(pollId);
          return user.votes(sent?.poll?.pollId ?? '', [index]);
        },
        postReceipt: async () => 0,
      },
      close: async () => {
        // Every request grammY made had a shape Telegram accepts.
        expect(api.rejected).toEqual([]);
        await telegram.close();
      },
    };
  },
  {
    receipt: 'the Bot API reports no delivery or read receipts to bots',
  },
);
