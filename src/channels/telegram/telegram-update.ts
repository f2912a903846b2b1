/**
 * A Telegram Bot API `Update` (a webhook body, or one element of `getUpdates`) read into what the channel acts on.
 * Only private chats count (a study talks to one person at a time); anything else is `ignored` with the reason, never
 * an error: Telegram would otherwise retry an update that will never be understood.
 *
 * - `message`: text, or a caption, or a bracketed note of what was sent (`[photo]`); a bot command (`/start <code>`,
 *   `/stop`) is split into its name and argument, the `@botname` suffix dropped.
 * - `poll-answer`: the option indexes chosen in a native poll (none: the vote was withdrawn).
 * - `blocked`: the participant blocked the bot (`my_chat_member` with status `kicked`).
 */
import { z } from 'zod';

export type TelegramEvent =
  | {
      kind: 'message';
      updateId: number;
      chatId: string;
      /** Telegram's message id, unique within the chat. */
      messageId: string;
      text: string;
      command?: { name: string; argument: string };
      date: Date;
      /** The sender's Telegram language (`en`, `pt-br`), for the fixed replies to chats we do not know. */
      languageCode?: string;
    }
  | { kind: 'poll-answer'; updateId: number; pollId: string; userId: string; optionIds: number[] }
  | { kind: 'blocked'; updateId: number; chatId: string }
  | { kind: 'ignored'; updateId: number | undefined; reason: string };

const id = z.union([z.number().int(), z.string().regex(/^-?\d+$/)]).transform(String);
const chat = z.object({ id, type: z.string() });
const user = z.object({ id, language_code: z.string().optional() });

const MEDIA_KINDS = [
  'photo',
  'sticker',
  'voice',
  'video',
  'video_note',
  'animation',
  'audio',
  'document',
  'location',
  'contact',
  'poll',
] as const;

/** Loose: the media fields (`photo`, `voice`, …) are kept to say what was sent. */
const message = z.looseObject({
  message_id: z.number().int(),
  date: z.number().int(),
  chat,
  from: user.optional(),
  text: z.string().optional(),
  caption: z.string().optional(),
});

const update = z.object({
  update_id: z.number().int(),
  message: message.optional(),
  poll_answer: z
    .object({ poll_id: z.string(), user: user.optional(), option_ids: z.array(z.number().int().nonnegative()) })
    .optional(),
  my_chat_member: z.object({ chat, new_chat_member: z.object({ status: z.string() }) }).optional(),
});

/** `/start abc` → `{ name: 'start', argument: 'abc' }`; `/stop@StudyBot` → `{ name: 'stop', argument: '' }`. */
export function parseCommand(text: string): { name: string; argument: string } | undefined {
  const match = /^\/([A-Za-z0-9_]{1,32})(?:@[A-Za-z0-9_]+)?(?:\s+([\s\S]*))?$/.exec(text.trim());
  return match?.[1] ? { name: match[1].toLowerCase(), argument: (match[2] ?? '').trim() } : undefined;
}

function describeMessage(value: z.infer<typeof message>): string {
  if (value.text !== undefined) return value.text;
  if (value.caption) return value.caption;
  const kind = MEDIA_KINDS.find((candidate) => value[candidate] !== undefined);
  return kind ? `[${kind.replace('_', ' ')}]` : '[message]';
}

export function parseTelegramUpdate(body: unknown): TelegramEvent {
  const parsed = update.safeParse(body);
  const updateId = (body as { update_id?: unknown } | null)?.update_id;
  if (!parsed.success) {
    return { kind: 'ignored', updateId: typeof updateId === 'number' ? updateId : undefined, reason: 'not an update' };
  }
  const { data } = parsed;
  if (data.message) {
    const incoming = data.message;
    if (incoming.chat.type !== 'private') return ignored(data.update_id, `a ${incoming.chat.type} chat`);
    const text = describeMessage(incoming);
    const command = incoming.text === undefined ? undefined : parseCommand(incoming.text);
    // A command's text is passed on without the `@botname` suffix, so `/stop@StudyBot` reads as `/stop`.
    const passedText = command ? `/${command.name}${command.argument ? ` ${command.argument}` : ''}` : text;
    return {
      kind: 'message',
      updateId: data.update_id,
      chatId: incoming.chat.id,
      messageId: String(incoming.message_id),
      text: passedText,
      ...(command ? { command } : {}),
      date: new Date(incoming.date * 1000),
      ...(incoming.from?.language_code ? { languageCode: incoming.from.language_code } : {}),
    };
  }
  if (data.poll_answer) {
    const answer = data.poll_answer;
    // Without `user` the vote came from a channel or an anonymous admin: never one of our one-to-one polls.
    if (!answer.user) return ignored(data.update_id, 'a poll answer without a user');
    return {
      kind: 'poll-answer',
      updateId: data.update_id,
      pollId: answer.poll_id,
      userId: answer.user.id,
      optionIds: answer.option_ids,
    };
  }
  const member = data.my_chat_member;
  if (member?.chat.type === 'private' && member.new_chat_member.status === 'kicked') {
    return { kind: 'blocked', updateId: data.update_id, chatId: member.chat.id };
  }
  return ignored(data.update_id, 'nothing the study acts on');
}

function ignored(updateId: number, reason: string): TelegramEvent {
  return { kind: 'ignored', updateId, reason };
}
