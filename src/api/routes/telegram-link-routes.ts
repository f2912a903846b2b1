/**
 * `POST /conversation/participants/{id}/telegram-link`: a new one-time deep link for a participant on the telegram
 * channel (the one returned at enrolment was lost, expired, or the participant moves to another Telegram account).
 * Behind the API token like the rest of `/conversation`. Earlier links stay usable until one of them is used.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { TELEGRAM_CHANNEL } from '../../channels/telegram/telegram-inbound.ts';
import { AppError } from '../../domain/errors.ts';
import { ok } from '../../http/envelope.ts';
import { parseInput } from '../../http/validation.ts';
import type { ParticipantService } from '../../participants/participant-service.ts';
import { participantIdParamsSchema } from '../schemas.ts';

export function createTelegramLinkRoutes(options: {
  participants: Pick<ParticipantService, 'get'>;
  linkFor: (participantId: string) => Promise<string>;
  isLinked: (participantId: string) => Promise<boolean>;
}): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    app.post(
      '/conversation/participants/:id/telegram-link',
      {
        config: { permission: 'write' },
        schema: {
          operationId: 'createTelegramLink',
          tags: ['participants'],
          summary: 'A new one-time Telegram deep link for a participant enrolled on the telegram channel',
          params: participantIdParamsSchema,
        },
      },
      async (request, reply) => {
        const { id } = parseInput(participantIdParamsSchema, request.params, 'path');
        const participant = await options.participants.get(id);
        if (participant.channel !== TELEGRAM_CHANNEL) {
          throw new AppError(
            'invalid_input',
            `participant ${id} is on the ${participant.channel || 'default'} channel, not telegram`,
          );
        }
        const link = await options.linkFor(id);
        return reply
          .code(201)
          .send(
            ok({ participant_id: id, telegram_link: link, linked: await options.isLinked(id) }, 'Telegram link issued'),
          );
      },
    );
  };
}
