/**
 * The original PromptPipe's API on top of PromptPipe's (`docs/api.md`, "The original API"): `/send`, `/schedule`,
 * `/receipts`, `/response`, `/responses` and `/timers`, thin adapters over the participant service, the outbox, the
 * durable jobs and the transcript. Behind the same bearer token as every other route; the original's `/stats`
 * figures are part of `GET /stats` (stats-routes.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { OriginalTimers } from '../../../original/original-timers.ts';
import { type PromptRouteOptions, registerPromptRoutes } from './prompt-routes.ts';
import { registerRecordRoutes } from './record-routes.ts';
import { registerTimerRoutes } from './timer-routes.ts';

export interface OriginalApiOptions extends PromptRouteOptions {
  timers: OriginalTimers;
}

export function registerOriginalApiRoutes(app: FastifyInstance, options: OriginalApiOptions): void {
  registerPromptRoutes(app, options);
  registerRecordRoutes(app, { store: options.store, clock: options.clock, defaultCountry: options.defaultCountry });
  registerTimerRoutes(app, { timers: options.timers });
}
