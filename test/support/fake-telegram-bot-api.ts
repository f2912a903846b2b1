/**
 * A local fake of the Telegram Bot API. It accepts only real requests: `POST /bot<token>/<method>` with a JSON body,
 * for `getMe`, `sendMessage`, `sendPoll`, `getUpdates`, `setWebhook` and `deleteWebhook`, each checked for the
 * fields Telegram requires (a shape it would refuse is answered 400 and listed in `rejected`, which a test asserts
 * stays empty). Answers are Telegram's envelopes: `{ok: true, result}` or `{ok: false, error_code, description,
 * parameters?}`.
 *
 * Telegram's users are simulated (`fake-telegram-users.ts` builds their updates): a bot may only write to a chat whose
 * user pressed Start (else 400 "chat not found"), and not to one who blocked it (403). Updates go where Telegram
 * would send them: to the webhook set with `setWebhook` (with its secret header; `webhookBase` stands in for the
 * public host), else into the queue `getUpdates` long-polls.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BotCall, checkShape, type Json } from './fake-telegram-shapes.ts';

export interface TelegramFailure {
  error_code: number;
  description: string;
  parameters?: { retry_after?: number };
}

export interface FakeTelegramBotApi {
  /** `TELEGRAM_API_URL`. */
  readonly url: string;
  readonly botUsername: string;
  /** Every call of an accepted shape, in order (`ok`: whether it succeeded). */
  readonly calls: BotCall[];
  /** The polls sent, with the ids Telegram gave them (what a `poll_answer` names). */
  readonly sentPolls: { id: string; chatId: number; question: string; options: string[] }[];
  /** Requests refused for their shape or method, with the reason. */
  readonly rejected: string[];
  /** The next sendMessage / sendPoll answers are these failures, in order. */
  failures: TelegramFailure[];
  /** The webhook as set (`setWebhook`), if any. */
  webhook: { url: string; secret: string | undefined } | undefined;
  /** The users who pressed Start, by chat id (= their user id in a private chat). */
  readonly started: Set<number>;
  readonly blocked: Set<number>;
  /** Hands an update to the bot as Telegram would; resolves with the webhook's HTTP status, or 0 once queued. */
  deliver(update: Json): Promise<number>;
  /** Resolves once the bot confirmed (long polling's offset) every update queued so far. */
  confirmed(): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeTelegramBotApi(options: {
  token: string;
  botUsername?: string;
  /** Where the webhook's host is reached (the test server), replacing the public URL's origin. */
  webhookBase?: () => string;
}): Promise<FakeTelegramBotApi> {
  const botUsername = options.botUsername ?? 'StudyCoachBot';
  const botUser = {
    id: Number(options.token.split(':')[0]),
    is_bot: true,
    first_name: 'Study coach',
    username: botUsername,
  };
  const queue: Json[] = [];
  let nextMessageId = 100;
  let nextPollId = 5_000_000_000;
  let waiting: (() => void)[] = [];
  const wake = () => {
    const waiters = waiting;
    waiting = [];
    for (const resolve of waiters) resolve();
  };

  const fake: FakeTelegramBotApi = {
    url: '',
    botUsername,
    calls: [],
    sentPolls: [],
    rejected: [],
    failures: [],
    webhook: undefined,
    started: new Set(),
    blocked: new Set(),
    async deliver(update) {
      if (fake.webhook) {
        const target = new URL(fake.webhook.url);
        const base = options.webhookBase?.() ?? target.origin;
        const response = await fetch(`${base}${target.pathname}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(fake.webhook.secret ? { 'x-telegram-bot-api-secret-token': fake.webhook.secret } : {}),
          },
          body: JSON.stringify(update),
        });
        await response.arrayBuffer();
        return response.status;
      }
      queue.push(update);
      wake();
      return 0;
    },
    async confirmed() {
      while (queue.length > 0) await new Promise<void>((resolve) => waiting.push(resolve));
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        wake();
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };

  const message = (chatId: number, extra: Json): Json => ({
    message_id: ++nextMessageId,
    from: botUser,
    chat: { id: chatId, first_name: 'Participant', type: 'private' },
    date: Math.floor(Date.now() / 1000),
    ...extra,
  });

  /** The recipient's state, as Telegram answers a send to it. */
  const recipientFailure = (chatId: number): TelegramFailure | undefined => {
    if (fake.blocked.has(chatId)) return { error_code: 403, description: 'Forbidden: bot was blocked by the user' };
    if (!fake.started.has(chatId)) return { error_code: 400, description: 'Bad Request: chat not found' };
    return fake.failures.shift();
  };

  async function getUpdates(body: Json): Promise<Json[]> {
    if (typeof body.offset === 'number') {
      const offset = body.offset;
      // Confirmed: Telegram forgets every update before the offset.
      while (queue.length > 0 && Number(queue[0]?.update_id) < offset) queue.shift();
      wake();
    }
    if (queue.length === 0 && typeof body.timeout === 'number' && body.timeout > 0) {
      const timeoutMs = body.timeout * 1000;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return [...queue];
  }

  async function answer(call: BotCall): Promise<{ status: number; body: Json }> {
    const success = (result: unknown) => ({ status: 200, body: { ok: true, result } });
    const failure = (failed: TelegramFailure) => ({ status: failed.error_code, body: { ok: false, ...failed } });
    const { body } = call;
    switch (call.method) {
      case 'getMe':
        return success({ ...botUser, can_join_groups: true, can_read_all_group_messages: false });
      case 'sendMessage': {
        const failed = recipientFailure(Number(body.chat_id));
        return failed ? failure(failed) : success(message(Number(body.chat_id), { text: body.text }));
      }
      case 'sendPoll': {
        const failed = recipientFailure(Number(body.chat_id));
        if (failed) return failure(failed);
        const options = (body.options as { text: string }[]).map(({ text }) => ({ text, voter_count: 0 }));
        const poll = {
          id: String(++nextPollId),
          question: body.question,
          options,
          total_voter_count: 0,
          is_closed: false,
          is_anonymous: body.is_anonymous ?? true,
          type: 'regular',
          allows_multiple_answers: body.allows_multiple_answers ?? false,
        };
        fake.sentPolls.push({
          id: poll.id,
          chatId: Number(body.chat_id),
          question: String(body.question),
          options: options.map(({ text }) => text),
        });
        return success(message(Number(body.chat_id), { poll }));
      }
      case 'getUpdates':
        if (fake.webhook) {
          return failure({
            error_code: 409,
            description:
              "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
          });
        }
        return success(await getUpdates(body));
      case 'setWebhook':
        fake.webhook = { url: String(body.url), secret: body.secret_token as string | undefined };
        return success(true);
      default:
        fake.webhook = undefined;
        return success(true);
    }
  }

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const send = ({ status, body }: { status: number; body: Json }) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      const checked = checkShape(request, Buffer.concat(chunks), options.token);
      if ('refused' in checked) {
        fake.rejected.push(checked.refused.reason);
        return send({ status: checked.refused.error_code, body: { ok: false, ...checked.refused.answer } });
      }
      fake.calls.push(checked.call);
      answer(checked.call).then(
        (answered) => {
          checked.call.ok = answered.status === 200;
          send(answered);
        },
        (error: unknown) => send({ status: 500, body: { ok: false, error_code: 500, description: String(error) } }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (fake as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
