/**
 * Staff take over a participant's conversation: `POST /conversation/participants/:id/takeover` (`timers`: `keep`, the
 * default, or `pause` the daily prompt meanwhile), `POST …/staff-messages` (a text, or a poll) out on the participant's
 * channel, `POST …/handback` (the coach answers again), `GET …/takeover` (who, since when, or null).
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { TakeoverService } from '../../safety/takeover-service.ts';
import type { Takeover } from '../../store/safety-records.ts';
import type { Store } from '../../store/store.ts';
import { ok } from '../envelope.ts';
import { permission } from '../route-permission.ts';
import { staffActor } from '../staff-actor.ts';
import { parseInput } from '../validation.ts';

const paramsSchema = z.object({ id: z.string().min(1) });
const takeOverSchema = z.object({ timers: z.enum(['keep', 'pause']).default('keep') }).strict();
const staffMessageSchema = z.union([
  z.object({ text: z.string().trim().min(1).max(4096) }).strict(),
  z
    .object({
      poll: z
        .object({
          question: z.string().trim().min(1).max(300),
          options: z.array(z.string().trim().min(1).max(100)).min(2).max(12),
        })
        .strict(),
    })
    .strict(),
]);

function takeoverView(takeover: Takeover) {
  return {
    participant_id: takeover.participantId,
    taken_by: takeover.takenBy,
    started_at: takeover.startedAt.toISOString(),
    timers: takeover.timers,
    last_staff_message_at: takeover.lastStaffMessageAt.toISOString(),
  };
}

export function createTakeoverApiRoutes(options: {
  store: Pick<Store, 'takeovers'>;
  takeovers: TakeoverService;
}): FastifyPluginAsync {
  const { takeovers } = options;
  const base = '/conversation/participants/:id';
  return async (app: FastifyInstance) => {
    app.get(`${base}/takeover`, permission('read'), async (request) => {
      const { id } = parseInput(paramsSchema, request.params, 'path');
      const takeover = await options.store.takeovers.get(id);
      return ok(takeover ? takeoverView(takeover) : null);
    });

    app.post(`${base}/takeover`, permission('alerts'), async (request, reply) => {
      const { id } = parseInput(paramsSchema, request.params, 'path');
      const body = parseInput(takeOverSchema, request.body ?? {}, 'request body');
      const takeover = await takeovers.takeOver(id, staffActor(request), body.timers);
      return reply.code(201).send(ok(takeoverView(takeover)));
    });

    app.post(`${base}/staff-messages`, permission('message'), async (request, reply) => {
      const { id } = parseInput(paramsSchema, request.params, 'path');
      const body = parseInput(staffMessageSchema, request.body, 'request body');
      const message =
        'text' in body
          ? { type: 'text' as const, text: body.text }
          : { type: 'poll' as const, question: body.poll.question, options: body.poll.options };
      const sent = await takeovers.staffMessage(id, staffActor(request), message);
      return reply.code(201).send(ok({ id: sent.id }));
    });

    app.post(`${base}/handback`, permission('alerts'), async (request) => {
      const { id } = parseInput(paramsSchema, request.params, 'path');
      return ok(takeoverView(await takeovers.handBack(id, staffActor(request))));
    });
  };
}
