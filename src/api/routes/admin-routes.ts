/**
 * `/admin/clock`: with `PROMPTPIPE_CLOCK=manual`, tests and demos move time forward; the job runner runs, in order,
 * everything that became due, and the response comes when all of it has finished. With the system clock the
 * endpoint answers 409: real time cannot be moved.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../domain/clock.ts';
import { AppError } from '../../domain/errors.ts';
import { ok } from '../../http/envelope.ts';
import { envelope, errorResponse } from '../../http/envelope-schemas.ts';
import { isManualClock } from '../../scheduling/clock.ts';
import type { JobRunner } from '../../scheduling/job-runner.ts';
import { COMMON_ERRORS } from '../openapi.ts';
import { clockBodySchema, clockResultSchema } from '../schemas.ts';

export const CLOCK_PATH = '/admin/clock';

export function registerAdminRoutes(
  app: FastifyInstance,
  options: { clock: Clock; runner: Pick<JobRunner, 'advanceTo'> | undefined },
): void {
  const { clock, runner } = options;
  const manual = isManualClock(clock);

  const api = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['admin'];
  const read = {
    operationId: 'getClock',
    tags,
    summary: 'The current (study) time and the clock mode',
    response: {
      200: envelope('Clock', z.object({ now: z.string(), mode: z.enum(['system', 'manual']) })),
      401: COMMON_ERRORS[401],
    },
  };
  api.get(CLOCK_PATH, { config: { permission: 'read' }, schema: read }, async () =>
    ok({ now: clock.now().toISOString(), mode: manual ? 'manual' : 'system' }),
  );

  // Serialised: two overlapping advances would each run "everything due" and race on the same jobs.
  let advancing: Promise<unknown> = Promise.resolve();
  const advance = {
    operationId: 'advanceClock',
    tags,
    summary: 'PROMPTPIPE_CLOCK=manual only: move time forward and run everything that became due',
    body: clockBodySchema,
    response: {
      200: envelope('Everything due has finished', clockResultSchema),
      ...COMMON_ERRORS,
      409: errorResponse('The clock is not manual'),
    },
  };
  api.post(CLOCK_PATH, { config: { permission: 'write' }, schema: advance }, async (request) => {
    if (!manual || !runner) {
      throw new AppError('conflict', 'the clock is not manual: start the server with PROMPTPIPE_CLOCK=manual');
    }
    const body = request.body;
    const work = advancing.then(async () => {
      const now = clock.now();
      const target =
        body.set_to !== undefined ? new Date(body.set_to) : new Date(now.getTime() + (body.advance_ms ?? 0));
      if (target.getTime() < now.getTime()) {
        throw new AppError(
          'invalid_input',
          `set_to ${target.toISOString()} is before the current time ${now.toISOString()}; the clock only moves forward`,
        );
      }
      const jobsRun = await runner.advanceTo(target);
      return { now: clock.now().toISOString(), jobs_run: jobsRun };
    });
    advancing = work.catch(() => undefined);
    return ok(await work);
  });
}
