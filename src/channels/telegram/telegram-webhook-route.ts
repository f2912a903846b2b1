/**
 * `POST /channels/telegram/webhook`: the Bot API's webhook. Telegram sends every update with the secret given to
 * `setWebhook` in `X-Telegram-Bot-Api-Secret-Token`; a request without it, or with another, is answered 401 and
 * nothing of it is read. The answer is 200 once the update is handled (a message durably recorded); a failure
 * answers 5xx, and Telegram sends the update again (duplicates are recognised).
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { AppError } from '../../domain/errors.ts';
import { failure } from '../../http/envelope.ts';

export const TELEGRAM_WEBHOOK_PATH = '/channels/telegram/webhook';
export const TELEGRAM_SECRET_HEADER = 'x-telegram-bot-api-secret-token';

/** Compared in constant time: how much of a guess matched must not show in the answer's timing. */
export function isTelegramSecret(expected: string, header: string | string[] | undefined): boolean {
  const given = Buffer.from(Array.isArray(header) ? (header[0] ?? '') : (header ?? ''), 'utf8');
  const wanted = Buffer.from(expected, 'utf8');
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

export function createTelegramRoutes(options: {
  secret: string;
  handleUpdate: (update: unknown) => Promise<void>;
}): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    const schema = {
      operationId: 'receiveTelegramUpdate',
      tags: ['channels'],
      summary: 'Telegram: a bot update (X-Telegram-Bot-Api-Secret-Token checked)',
    };
    app.post(TELEGRAM_WEBHOOK_PATH, { config: { public: true }, schema }, async (request, reply) => {
      if (!isTelegramSecret(options.secret, request.headers[TELEGRAM_SECRET_HEADER])) {
        return reply
          .code(401)
          .send(failure('missing or wrong X-Telegram-Bot-Api-Secret-Token: expected the secret given to setWebhook'));
      }
      if (request.body === null || typeof request.body !== 'object' || Array.isArray(request.body)) {
        throw new AppError('invalid_input', 'request body must be a Telegram Update (a JSON object)');
      }
      await options.handleUpdate(request.body);
      return reply.code(200).send({ status: 'ok' });
    });
  };
}
