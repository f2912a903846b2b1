/**
 * Telegram users for the fake Bot API: the updates their actions produce, in Telegram's shapes (a private chat's id is
 * its user's id). `update_id` grows like Telegram's; message ids count per chat.
 */
import type { FakeTelegramBotApi } from './fake-telegram-bot-api.ts';
import type { Json } from './fake-telegram-shapes.ts';

let nextUpdateId = 700_000_000;

export interface TelegramUser {
  readonly chatId: number;
  /** Opens the bot's chat by a deep link or the Start button: `/start <code>` (the code from `?start=`). */
  pressStart(link?: string): Promise<number>;
  says(text: string): Promise<number>;
  /** The update of a new message, not sent yet (to send the same update twice, as Telegram may). */
  messageUpdate(text: string): Json;
  /** Votes in a native poll the bot sent (option indexes; none withdraws the vote). */
  votes(pollId: string, optionIds: number[]): Promise<number>;
  /** Blocks the bot; Telegram tells the bot with a `my_chat_member` update unless `silently`. */
  blocks(options?: { silently?: boolean }): Promise<number>;
}

export function telegramUser(
  api: FakeTelegramBotApi,
  chatId: number,
  profile: {
    firstName?: string;
    languageCode?: string;
    /** How the update reaches the bot; default `api.deliver` (the webhook set, or the getUpdates queue). */
    deliver?: (update: Json) => Promise<number>;
  } = {},
): TelegramUser {
  const deliver = profile.deliver ?? ((update: Json) => api.deliver(update));
  const from = {
    id: chatId,
    is_bot: false,
    first_name: profile.firstName ?? 'Ada',
    language_code: profile.languageCode ?? 'en',
  };
  const chat = { id: chatId, first_name: from.first_name, type: 'private' };
  let nextMessageId = 1;
  const now = () => Math.floor(Date.now() / 1000);
  const update = (content: Json): Json => ({ update_id: ++nextUpdateId, ...content });
  const message = (text: string): Json => {
    const command = /^\/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?/.exec(text)?.[0];
    return update({
      message: {
        message_id: nextMessageId++,
        from,
        chat,
        date: now(),
        text,
        ...(command ? { entities: [{ offset: 0, length: command.length, type: 'bot_command' }] } : {}),
      },
    });
  };
  return {
    chatId,
    pressStart(link) {
      api.started.add(chatId);
      api.blocked.delete(chatId);
      const code = link ? new URL(link).searchParams.get('start') : null;
      return deliver(message(code ? `/start ${code}` : '/start'));
    },
    says(text) {
      // Nobody writes to a bot without opening its chat first.
      api.started.add(chatId);
      return deliver(message(text));
    },
    messageUpdate: message,
    votes: (pollId, optionIds) =>
      deliver(update({ poll_answer: { poll_id: pollId, user: from, option_ids: optionIds } })),
    async blocks(options = {}) {
      api.blocked.add(chatId);
      if (options.silently) return 0;
      return deliver(
        update({
          my_chat_member: {
            chat,
            from,
            date: now(),
            old_chat_member: { user: { id: 0, is_bot: true, first_name: 'bot' }, status: 'member' },
            new_chat_member: { user: { id: 0, is_bot: true, first_name: 'bot' }, status: 'kicked', until_date: 0 },
          },
        }),
      );
    },
  };
}
