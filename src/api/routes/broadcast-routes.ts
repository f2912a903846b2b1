/**
 * `POST /conversation/broadcasts` `{text, status?, channel?, dry_run?}` and `GET /conversation/broadcasts/{id}`
 * (progress: queued, sent, failed, skipped).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../http/envelope.ts';
import { envelope, errorResponse } from '../../http/envelope-schemas.ts';
import type { BroadcastProgress, BroadcastService } from '../../research/broadcasts/broadcast-service.ts';
import { broadcastBodySchema } from '../../research/research-schemas.ts';
import { COMMON_ERRORS } from '../openapi.ts';
import { broadcastProgressSchema } from './research-result-schemas.ts';

export const BROADCASTS_PATH = '/conversation/broadcasts';

function progressJson(progress: BroadcastProgress, ratePerMinute: number): Record<string, unknown> {
  const { broadcast } = progress;
  return {
    id: broadcast.id,
    text: broadcast.text,
    filter: broadcast.filter,
    recipients: broadcast.recipients,
    rate_per_minute: ratePerMinute,
    created_at: broadcast.createdAt.toISOString(),
    queued: progress.queued,
    sent: progress.sent,
    failed: progress.failed,
    skipped: progress.skipped,
  };
}

export function registerBroadcastRoutes(
  app: FastifyInstance,
  options: { broadcasts: BroadcastService; ratePerMinute: number },
): void {
  const { broadcasts, ratePerMinute } = options;
  const api = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['research'];

  const create = {
    operationId: 'createBroadcast',
    tags,
    summary: 'Send a message to every matching participant, paced by BROADCAST_RATE; withdrawn participants never',
    body: broadcastBodySchema,
    response: {
      200: envelope('Dry run: the recipients', z.looseObject({})),
      202: envelope('Queued', broadcastProgressSchema),
      ...COMMON_ERRORS,
    },
  };
  api.post(BROADCASTS_PATH, { config: { permission: 'message' }, schema: create }, async (request, reply) => {
    const body = request.body;
    const created = await broadcasts.create({
      text: body.text,
      status: body.status,
      channel: body.channel,
      dryRun: body.dry_run,
    });
    if (!created.broadcast) {
      return ok(
        {
          dry_run: true,
          recipients: created.participantIds.length,
          participant_ids: created.participantIds,
          excluded_withdrawn: created.excludedWithdrawn,
          rate_per_minute: ratePerMinute,
        },
        `dry run: ${created.participantIds.length} participant(s) would receive the broadcast`,
      );
    }
    const progress = await broadcasts.progress(created.broadcast.id);
    reply.code(202);
    return ok(
      { ...progressJson(progress, ratePerMinute), dry_run: false, excluded_withdrawn: created.excludedWithdrawn },
      `broadcast queued for ${created.participantIds.length} participant(s) at ${ratePerMinute}/min`,
    );
  });

  const progress = {
    operationId: 'getBroadcast',
    tags,
    summary: 'Progress of a broadcast',
    params: z.object({ id: z.string() }),
    response: {
      200: envelope('Progress', broadcastProgressSchema),
      ...COMMON_ERRORS,
      404: errorResponse('Unknown broadcast'),
    },
  };
  api.get(`${BROADCASTS_PATH}/:id`, { config: { permission: 'read' }, schema: progress }, async (request) => {
    const id = request.params.id;
    return ok(progressJson(await broadcasts.progress(id), ratePerMinute));
  });
}
