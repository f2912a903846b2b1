/**
 * The logger the scheduling layer writes to: the core's pino subset (`engine/logger.ts`), under the name the
 * scheduling files use. Tests pass `silentLog` or a recording fake.
 */
import { type Logger, silentLogger } from '../engine/logger.ts';

export type SchedulingLog = Logger;

/** Discards everything. */
export const silentLog: SchedulingLog = silentLogger;
