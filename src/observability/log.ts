/**
 * The process logger (pino), which satisfies the one `Log` type of `domain/log.ts` (re-exported here for the server
 * layers).
 */
import { pino } from 'pino';
import { redactingHooks, redactingSerializers } from './log-redaction.ts';

export { type Log, silentLog } from '../domain/log.ts';

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
