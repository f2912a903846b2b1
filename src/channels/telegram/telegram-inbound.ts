/**
 * What the telegram channel does with one update, however it arrived (webhook or long polling):
 * - `/start <code>` binds the chat to the code's participant and wakes the messages held for them (the greeting);
 *   a used, expired or unknown code gets a fixed reply asking for a new link.
 * - a message from a bound chat goes to the inbound pipeline as the participant's (`/stop` is the STOP opt-out there),
 *   de-duplicated by `<chat id>:<message id>`;
 * - a `poll_answer` of one of our polls becomes the structured answer, resolved against the poll as sent;
 * - the participant blocking the bot withdraws them, as STOP does;
 * - any other chat gets one polite fixed reply and nothing else: nothing is recorded about it.
 */

import type { Clock } from '../../domain/clock.ts';
import { AppError, errorMessage } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import type { Participant } from '../../domain/participant.ts';
import type { MessageCatalogue, MessageKey } from '../../i18n/message-catalogue.ts';
import type { ChannelInboundMessage, InboundService } from '../../inbound/inbound-port.ts';
import type { Store } from '../../store/store.ts';
import { wakeLinkedDeliveries } from './held-deliveries.ts';
import type { TelegramBotApi } from './telegram-bot-api.ts';
import type { TelegramLinks } from './telegram-links.ts';
import { parseTelegramUpdate, type TelegramEvent } from './telegram-update.ts';

export const TELEGRAM_CHANNEL = 'telegram';

export interface TelegramInboundOptions {
  store: Store;
  clock: Clock;
  log: Log;
  api: Pick<TelegramBotApi, 'sendText'>;
  links: TelegramLinks;
  messages: MessageCatalogue;
  /** The inbound pipeline (built after the channel). */
  receiver: () => Pick<InboundService, 'receive'> | undefined;
  /** The participant blocked the bot: the opt-out (`OptOutHandler.recipientRefused`). */
  onBlocked: (participantId: string) => Promise<void>;
  /** Held deliveries were re-queued for now: wake the job runner. */
  onJobEnqueued: () => void;
}

export function createTelegramUpdateHandler(options: TelegramInboundOptions): (update: unknown) => Promise<void> {
  const { store, clock, log, api, links, messages } = options;

  /** A fixed text straight to the chat (no participant, or none yet): not study data, so not in any transcript. */
  async function reply(chatId: string, key: MessageKey, language: string | undefined): Promise<void> {
    try {
      await api.sendText(chatId, messages.t(language, key));
    } catch (error) {
      log.warn({ channel: TELEGRAM_CHANNEL, key, error: errorMessage(error) }, 'telegram: fixed reply not sent');
    }
  }

  async function participantOfChat(chatId: string): Promise<Participant | undefined> {
    const participantId = await store.telegram.participantOfChat(chatId);
    return participantId ? store.participants.get(participantId) : undefined;
  }

  async function pass(message: ChannelInboundMessage): Promise<void> {
    const receiver = options.receiver();
    if (!receiver) throw new AppError('unavailable', 'telegram: the inbound pipeline is not attached yet');
    try {
      await receiver.receive(message);
    } catch (error) {
      // The chat is bound to a participant whose number no longer resolves: nothing to retry.
      if (!(error instanceof AppError) || error.code !== 'not_found') throw error;
      log.warn({ channel: TELEGRAM_CHANNEL }, 'telegram: message of a bound chat whose participant is gone');
    }
  }

  async function bind(event: Extract<TelegramEvent, { kind: 'message' }>, code: string): Promise<void> {
    const now = clock.now();
    const bound = await store.transaction(async () => {
      const participantId = await links.bind(code, event.chatId);
      if (!participantId) return undefined;
      return { participantId, released: await wakeLinkedDeliveries(store, participantId, now) };
    });
    if (!bound) {
      log.info({ channel: TELEGRAM_CHANNEL }, 'telegram: /start with an unknown, used or expired code');
      await reply(event.chatId, 'telegram.linkInvalid', event.languageCode);
      return;
    }
    log.info({ participantId: bound.participantId, released: bound.released }, 'telegram: chat linked');
    await store.events.record({
      participantId: bound.participantId,
      type: 'telegram-linked',
      data: { released_messages: bound.released },
      createdAt: now,
    });
    if (bound.released > 0) {
      options.onJobEnqueued();
      return;
    }
    // Nothing was waiting (a participant linking again): say it worked, or the Start button seems to do nothing.
    const participant = await store.participants.get(bound.participantId);
    await reply(event.chatId, 'telegram.linked', participant?.language ?? event.languageCode);
  }

  async function message(event: Extract<TelegramEvent, { kind: 'message' }>): Promise<void> {
    if (event.command?.name === 'start' && event.command.argument) return bind(event, event.command.argument);
    const participant = await participantOfChat(event.chatId);
    if (!participant) {
      log.info({ channel: TELEGRAM_CHANNEL }, 'telegram: message from a chat that is not linked; fixed reply');
      return reply(event.chatId, 'telegram.unknownChat', event.languageCode);
    }
    return pass({
      channel: TELEGRAM_CHANNEL,
      from: participant.phoneNumber,
      text: event.text,
      providerMessageId: `${event.chatId}:${event.messageId}`,
      timestamp: event.date,
    });
  }

  async function pollAnswer(event: Extract<TelegramEvent, { kind: 'poll-answer' }>): Promise<void> {
    const sent = await store.telegram.sentPoll(event.pollId);
    // In a private chat only its owner can vote; a vote of anyone else on a forwarded poll is not an answer.
    if (!sent?.poll || sent.chatId !== event.userId) {
      log.info({ channel: TELEGRAM_CHANNEL, pollId: event.pollId }, 'telegram: answer to a poll that is not ours');
      return;
    }
    const [index] = event.optionIds;
    const option = index === undefined ? undefined : sent.poll.options[index];
    // No option: the vote was retracted; there is nothing to answer.
    if (index === undefined || option === undefined) return;
    const participant = await store.participants.get(sent.participantId);
    if (!participant) return;
    await pass({
      channel: TELEGRAM_CHANNEL,
      from: participant.phoneNumber,
      text: '',
      // A changed vote is a new answer; the same update delivered twice is one.
      providerMessageId: `poll:${event.pollId}:${event.optionIds.join(',')}`,
      pollAnswer: { pollId: sent.outboundId, question: sent.poll.question, option, optionIndex: index },
    });
  }

  return async (update) => {
    const event = parseTelegramUpdate(update);
    switch (event.kind) {
      case 'message':
        return message(event);
      case 'poll-answer':
        return pollAnswer(event);
      case 'blocked': {
        const participant = await participantOfChat(event.chatId);
        if (participant) await options.onBlocked(participant.id);
        return;
      }
      case 'ignored':
        log.debug({ channel: TELEGRAM_CHANNEL, updateId: event.updateId, reason: event.reason }, 'telegram: ignored');
        return;
    }
  };
}
