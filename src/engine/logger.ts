/** The engine's name for the one `Log` type (domain/log.ts). */
import { type Log, silentLog } from '../domain/log.ts';

export type Logger = Log;

export const silentLogger: Logger = silentLog;
