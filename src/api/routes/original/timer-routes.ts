/**
 * `GET /timers`, `GET /timers/{id}` and `DELETE /timers/{id}` of the original PromptPipe API over PromptPipe's
 * durable jobs (`src/original/original-timers.ts`). As in the original, these answer without the envelope; an error
 * is the usual `{status: "error", message}`.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { OriginalTimers } from '../../../original/original-timers.ts';
import { parseInput } from '../../validation.ts';

const timerParamsSchema = z.object({ id: z.string().min(1).max(200) });

export function registerTimerRoutes(app: FastifyInstance, options: { timers: OriginalTimers }): void {
  const { timers } = options;

  app.get('/timers', { config: { permission: 'read' } }, async () => {
    const list = await timers.list();
    return { timers: list, count: list.length };
  });

  app.get('/timers/:id', { config: { permission: 'read' } }, async (request) =>
    timers.get(parseInput(timerParamsSchema, request.params, 'path').id),
  );

  app.delete('/timers/:id', { config: { permission: 'write' } }, async (request) => {
    const { id } = parseInput(timerParamsSchema, request.params, 'path');
    await timers.cancel(id);
    return { message: 'Timer cancelled successfully', timerID: id, canceled: true };
  });
}
