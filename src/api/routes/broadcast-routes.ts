/**
 * `POST /conversation/broadcasts` `{text, status?, channel?, dry_run?}` and `GET /conversation/broadcasts/{id}`
 * (progress: queued, sent, failed, skipped).
 */
import type { FastifyInstance } from 'fastify';
import type { BroadcastProgress, BroadcastService } from '../../research/broadcasts/broadcast-service.ts';
import { broadcastBodySchema } from '../../research/research-schemas.ts';
import { ok } from '../envelope.ts';
import { parseInput } from '../validation.ts';

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

  app.post(BROADCASTS_PATH, { config: { permission: 'message' } }, async (request, reply) => {
    const body = parseInput(broadcastBodySchema, request.body, 'request body');
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

  app.get(`${BROADCASTS_PATH}/:id`, { config: { permission: 'read' } }, async (request) => {
    const id = String((request.params as { id: string }).id);
    return ok(progressJson(await broadcasts.progress(id), ratePerMinute));
  });
}
