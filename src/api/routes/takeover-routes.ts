/**
 * Staff take over a participant's conversation: `POST /conversation/participants/:id/takeover` (`timers`: `keep`, the
 * default, or `pause` the daily prompt meanwhile), `POST …/staff-messages` (a text, or a poll) out on the participant's
 * channel, `POST …/handback` (the coach answers again), `GET …/takeover` (who, since when, or null).
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../http/envelope.ts';
import { envelope, errorResponse } from '../../http/envelope-schemas.ts';
import type { TakeoverService } from '../../safety/takeover-service.ts';
import type { Takeover } from '../../store/safety-records.ts';
import type { Store } from '../../store/store.ts';
import { COMMON_ERRORS } from '../openapi.ts';
import { permission } from '../route-permission.ts';
import { staffActor } from '../staff-actor.ts';

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

const tags = ['safety'];
const takeoverSchema = z.object({
  participant_id: z.string(),
  taken_by: z.string(),
  started_at: z.string(),
  timers: z.enum(['keep', 'pause']),
  last_staff_message_at: z.string(),
});
const unknownParticipant = { 404: errorResponse('Unknown participant id') };

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
  return async (scope: FastifyInstance) => {
    const app = scope.withTypeProvider<ZodTypeProvider>();
    const current = {
      operationId: 'getTakeover',
      tags,
      summary: 'The staff takeover of the conversation in force, or null',
      params: paramsSchema,
      response: { 200: envelope('The takeover', takeoverSchema.nullable()), ...COMMON_ERRORS },
    };
    app.get(`${base}/takeover`, { ...permission('read'), schema: current }, async (request) => {
      const { id } = request.params;
      const takeover = await options.store.takeovers.get(id);
      return ok(takeover ? takeoverView(takeover) : null);
    });

    const takeOver = {
      operationId: 'takeOverConversation',
      tags,
      summary: 'Staff take the conversation over: the coach stops answering until handback',
      params: paramsSchema,
      body: takeOverSchema,
      response: { 201: envelope('Taken over', takeoverSchema), ...COMMON_ERRORS, ...unknownParticipant },
    };
    app.post(`${base}/takeover`, { ...permission('alerts'), schema: takeOver }, async (request, reply) => {
      const { id } = request.params;
      const body = request.body;
      const takeover = await takeovers.takeOver(id, staffActor(request), body.timers);
      return reply.code(201).send(ok(takeoverView(takeover)));
    });

    const staffMessage = {
      operationId: 'sendStaffMessage',
      tags,
      summary: 'A message (text or poll) from staff during a takeover',
      params: paramsSchema,
      body: staffMessageSchema,
      response: { 201: envelope('Queued', z.object({ id: z.string() })), ...COMMON_ERRORS, ...unknownParticipant },
    };
    const messagesPath = `${base}/staff-messages`;
    app.post(messagesPath, { ...permission('message'), schema: staffMessage }, async (request, reply) => {
      const { id } = request.params;
      const body = request.body;
      const message =
        'text' in body
          ? { type: 'text' as const, text: body.text }
          : { type: 'poll' as const, question: body.poll.question, options: body.poll.options };
      const sent = await takeovers.staffMessage(id, staffActor(request), message);
      return reply.code(201).send(ok({ id: sent.id }));
    });

    const handBack = {
      operationId: 'handBackConversation',
      tags,
      summary: 'End the takeover: the coach answers again',
      params: paramsSchema,
      response: { 200: envelope('Handed back', takeoverSchema), ...COMMON_ERRORS, ...unknownParticipant },
    };
    app.post(`${base}/handback`, { ...permission('alerts'), schema: handBack }, async (request) => {
      const { id } = request.params;
      return ok(takeoverView(await takeovers.handBack(id, staffActor(request))));
    });
  };
}
