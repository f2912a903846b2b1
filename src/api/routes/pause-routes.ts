/**
 * Vacation mode: `POST /conversation/participants/:id/pause` with an optional `resume_on` (a date in the participant's
 * time zone; the coach resumes that day at midnight), and `POST …/resume` to resume now. Paused, a participant gets
 * no proactive message; their own messages are still answered unless `PAUSE_ANSWERS_MESSAGES=false`.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../http/envelope.ts';
import { envelope, errorResponse } from '../../http/envelope-schemas.ts';
import type { PauseService } from '../../participants/pause-service.ts';
import { COMMON_ERRORS } from '../openapi.ts';
import { permission } from '../route-permission.ts';
import { staffActor } from '../staff-actor.ts';

const paramsSchema = z.object({ id: z.string().min(1) });
const pauseSchema = z
  .object({
    resume_on: z.iso.date('resume_on must be a date such as 2026-08-01').optional(),
  })
  .strict();

const tags = ['participants'];
const unknownParticipant = { 404: errorResponse('Unknown participant id') };

export function createPauseApiRoutes(options: { pauses: PauseService }): FastifyPluginAsync {
  const base = '/conversation/participants/:id';
  return async (scope: FastifyInstance) => {
    const app = scope.withTypeProvider<ZodTypeProvider>();
    const pause = {
      operationId: 'pauseParticipant',
      tags,
      summary: 'Pause the coach (vacation mode), until resume_on or until resumed',
      params: paramsSchema,
      body: pauseSchema,
      response: {
        200: envelope('Paused', z.object({ id: z.string(), status: z.string(), resume_on: z.string().nullable() })),
        ...COMMON_ERRORS,
        ...unknownParticipant,
      },
    };
    app.post(`${base}/pause`, { ...permission('write'), schema: pause }, async (request) => {
      const { id } = request.params;
      const body = request.body;
      const participant = await options.pauses.pause(id, body.resume_on, staffActor(request));
      return ok({ id: participant.id, status: participant.status, resume_on: body.resume_on ?? null });
    });

    const resume = {
      operationId: 'resumeParticipant',
      tags,
      summary: 'Resume a paused participant now',
      params: paramsSchema,
      response: {
        200: envelope('Resumed', z.object({ id: z.string(), status: z.string() })),
        ...COMMON_ERRORS,
        ...unknownParticipant,
      },
    };
    app.post(`${base}/resume`, { ...permission('write'), schema: resume }, async (request) => {
      const { id } = request.params;
      const participant = await options.pauses.resume(id, staffActor(request));
      return ok({ id: participant.id, status: participant.status });
    });
  };
}
