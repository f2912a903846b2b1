/**
 * The one logger type every layer writes to: structured data first, message second (pino's order), so a pino logger
 * satisfies it structurally. A part that only warns takes `Pick<Log, 'warn'>`. Tests pass `silentLog` or a recording
 * fake; the process logger itself is made in `observability/log.ts`.
 */
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
