/**
 * `GET /timers`, `GET /timers/{id}` and `DELETE /timers/{id}` of the original PromptPipe API over PromptPipe's
 * durable jobs (`src/original/original-timers.ts`). As in the original, these answer without the envelope; an error
 * is the usual `{status: "error", message}`.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponse } from '../../../http/envelope-schemas.ts';
import type { OriginalTimers } from '../../../original/original-timers.ts';
import {
  ORIGINAL_ERRORS,
  ORIGINAL_TAGS,
  timerCancelSchema,
  timerInfoSchema,
  timerListSchema,
} from './original-schemas.ts';

const timerParamsSchema = z.object({ id: z.string().min(1).max(200) });

export function registerTimerRoutes(app: FastifyInstance, options: { timers: OriginalTimers }): void {
  const { timers } = options;
  const api = app.withTypeProvider<ZodTypeProvider>();
  const tags = ORIGINAL_TAGS;
  const notFound = { 404: errorResponse('Timer not found') };
  const list = {
    operationId: 'listTimers',
    tags,
    summary: 'Every pending timer (durable job) with its kind, owner and due time; no envelope',
    response: { 200: timerListSchema.describe('Timers'), ...ORIGINAL_ERRORS },
  };
  const one = {
    operationId: 'getTimer',
    tags,
    summary: 'One timer; no envelope',
    params: timerParamsSchema,
    response: { 200: timerInfoSchema.describe('The timer'), ...ORIGINAL_ERRORS, ...notFound },
  };
  const cancel = {
    operationId: 'cancelTimer',
    tags,
    summary: 'Cancel a timer (recorded as a timer-cancelled event); no envelope',
    params: timerParamsSchema,
    response: {
      200: timerCancelSchema.describe('Cancelled'),
      ...ORIGINAL_ERRORS,
      ...notFound,
      409: errorResponse('The timer is running right now; cancel it again in a moment'),
    },
  };

  api.get('/timers', { config: { permission: 'read' }, schema: list }, async () => {
    const list = await timers.list();
    return { timers: list, count: list.length };
  });

  api.get('/timers/:id', { config: { permission: 'read' }, schema: one }, async (request) =>
    timers.get(request.params.id),
  );

  api.delete('/timers/:id', { config: { permission: 'write' }, schema: cancel }, async (request) => {
    const { id } = request.params;
    await timers.cancel(id);
    return { message: 'Timer cancelled successfully', timerID: id, canceled: true as const };
  });
}
