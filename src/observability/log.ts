/**
 * The narrow logger the server layers (API, channels, participants, composition root) write to. A pino logger
 * satisfies it structurally; tests pass `silentLog` or a recording fake. Structured data first, message second
 * (pino's order), the same shape as the scheduling layer's `SchedulingLog`.
 */
import { pino } from 'pino';
import { redactingHooks, redactingSerializers } from './log-redaction.ts';

export interface Log {
  debug(data: Record<string, unknown>, message: string): void;
  info(data: Record<string, unknown>, message: string): void;
  warn(data: Record<string, unknown>, message: string): void;
  error(data: Record<string, unknown>, message: string): void;
}

/** Discards everything. */
export const silentLog: Log = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/**
 * The process logger: JSON lines on stdout (or stderr, for the console chat whose stdout is the conversation; or a
 * stream, in tests). Credentials in URLs, headers and messages are redacted (log-redaction.ts).
 */
export function createLogger(options: {
  level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  destination?: 'stdout' | 'stderr' | pino.DestinationStream;
}): pino.Logger {
  const { destination } = options;
  return pino(
    { level: options.level, base: { service: 'promptpipe' }, serializers: redactingSerializers, hooks: redactingHooks },
    typeof destination === 'object' ? destination : pino.destination(destination === 'stderr' ? 2 : 1),
  );
}
