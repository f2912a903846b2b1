/**
 * What the fake Telegram Bot API accepts (fake-telegram-bot-api.ts): the URL, the token, the JSON body, and the
 * fields of each method it implements, as Telegram documents them. Anything else is refused with Telegram's answer.
 */
import type { IncomingMessage } from 'node:http';

export type Json = Record<string, unknown>;

export interface BotCall {
  method: string;
  body: Json;
  /** Set once answered: whether Telegram accepted it (a failure injected or a blocked chat: false). */
  ok?: boolean;
}

export type Checked =
  | { call: BotCall }
  | { refused: { reason: string; error_code: number; answer: { error_code: number; description: string } } };

/** The update types a bot may ask for (`allowed_updates`). */
const UPDATE_TYPES = new Set([
  'message',
  'edited_message',
  'channel_post',
  'edited_channel_post',
  'business_connection',
  'business_message',
  'message_reaction',
  'inline_query',
  'chosen_inline_result',
  'callback_query',
  'shipping_query',
  'pre_checkout_query',
  'poll',
  'poll_answer',
  'my_chat_member',
  'chat_member',
  'chat_join_request',
]);

const isChatId = (value: unknown) =>
  (typeof value === 'number' && Number.isSafeInteger(value)) || (typeof value === 'string' && /^-?\d+$/.test(value));
const isText = (value: unknown, max: number) => typeof value === 'string' && value.length >= 1 && value.length <= max;
const isOptionalBoolean = (value: unknown) => value === undefined || typeof value === 'boolean';
const isUpdateList = (value: unknown) =>
  value === undefined || (Array.isArray(value) && value.every((type) => UPDATE_TYPES.has(String(type))));

/** The Bad Request description of a body this method would refuse, or undefined. */
function problemOf(method: string, body: Json): string | undefined {
  switch (method) {
    case 'getMe':
    case 'deleteWebhook':
      return undefined;
    case 'sendMessage':
      if (!isChatId(body.chat_id)) return 'chat_id is empty';
      if (typeof body.text !== 'string' || body.text.trim() === '') return 'message text is empty';
      return body.text.length > 4096 ? 'message is too long' : undefined;
    case 'sendPoll': {
      if (!isChatId(body.chat_id)) return 'chat_id is empty';
      if (!isText(body.question, 300)) return 'poll question length must not exceed 300';
      const options = body.options;
      if (!Array.isArray(options) || options.length < 2 || options.length > 12) {
        return 'poll must have 2-12 options';
      }
      if (!options.every((option: unknown) => isText((option as Json | null)?.text, 100))) {
        return "can't parse InputPollOption JSON object";
      }
      const flags = isOptionalBoolean(body.is_anonymous) && isOptionalBoolean(body.allows_multiple_answers);
      return flags ? undefined : 'is_anonymous and allows_multiple_answers must be Boolean';
    }
    case 'getUpdates':
      if (body.offset !== undefined && !Number.isInteger(body.offset)) return 'offset must be an Integer';
      if (body.timeout !== undefined && !(Number.isInteger(body.timeout) && Number(body.timeout) >= 0)) {
        return 'timeout must be a non-negative Integer';
      }
      return isUpdateList(body.allowed_updates) ? undefined : 'allowed_updates must list update types';
    case 'setWebhook': {
      if (typeof body.url !== 'string' || !URL.canParse(body.url)) return 'bad webhook: invalid URL';
      if (new URL(body.url).protocol !== 'https:') return 'bad webhook: An HTTPS URL must be provided for webhook';
      const secret = body.secret_token;
      if (secret !== undefined && !(typeof secret === 'string' && /^[A-Za-z0-9_-]{1,256}$/.test(secret))) {
        return 'secret token contains unallowed characters';
      }
      return isUpdateList(body.allowed_updates) ? undefined : 'allowed_updates must list update types';
    }
    default:
      return 'method not implemented by the fake';
  }
}

const METHODS = new Set(['getMe', 'sendMessage', 'sendPoll', 'getUpdates', 'setWebhook', 'deleteWebhook']);

export function checkShape(request: IncomingMessage, raw: Buffer, token: string): Checked {
  const refuse = (reason: string, errorCode: number, description: string): Checked => ({
    refused: { reason, error_code: errorCode, answer: { error_code: errorCode, description } },
  });
  const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(request.url ?? '');
  if (request.method !== 'POST' || !match) return refuse(`${request.method} ${request.url}`, 404, 'Not Found');
  if (match[1] !== token) return refuse('wrong token', 401, 'Unauthorized');
  const method = match[2] ?? '';
  if (!METHODS.has(method)) return refuse(`unknown method ${method}`, 404, 'Not Found: method not found');
  if (!String(request.headers['content-type']).startsWith('application/json')) {
    return refuse(`${method}: body is not JSON`, 400, 'Bad Request: expected a JSON body');
  }
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return refuse(`${method}: body is not JSON`, 400, "Bad Request: can't parse JSON");
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return refuse(`${method}: body is not an object`, 400, 'Bad Request: expected a JSON object');
  }
  const problem = problemOf(method, body as Json);
  if (problem) return refuse(`${method}: ${problem}`, 400, `Bad Request: ${problem}`);
  return { call: { method, body: body as Json } };
}
