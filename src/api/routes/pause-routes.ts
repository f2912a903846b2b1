/**
 * Vacation mode: `POST /conversation/participants/:id/pause` with an optional `resume_on` (a date in the participant's
 * time zone; the coach resumes that day at midnight), and `POST …/resume` to resume now. Paused, a participant gets
 * no proactive message; their own messages are still answered unless `PAUSE_ANSWERS_MESSAGES=false`.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { PauseService } from '../../participants/pause-service.ts';
import { ok } from '../envelope.ts';
import { permission } from '../route-permission.ts';
import { staffActor } from '../staff-actor.ts';
import { parseInput } from '../validation.ts';

const paramsSchema = z.object({ id: z.string().min(1) });
const pauseSchema = z
  .object({
    resume_on: z.iso.date('resume_on must be a date such as 2026-08-01').optional(),
  })
  .strict();

export function createPauseApiRoutes(options: { pauses: PauseService }): FastifyPluginAsync {
  const base = '/conversation/participants/:id';
  return async (app: FastifyInstance) => {
    app.post(`${base}/pause`, permission('write'), async (request) => {
      const { id } = parseInput(paramsSchema, request.params, 'path');
      const body = parseInput(pauseSchema, request.body ?? {}, 'request body');
      const participant = await options.pauses.pause(id, body.resume_on, staffActor(request));
      return ok({ id: participant.id, status: participant.status, resume_on: body.resume_on ?? null });
    });

    app.post(`${base}/resume`, permission('write'), async (request) => {
      const { id } = parseInput(paramsSchema, request.params, 'path');
      const participant = await options.pauses.resume(id, staffActor(request));
      return ok({ id: participant.id, status: participant.status });
    });
  };
}
