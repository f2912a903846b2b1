/**
 * What every command shares: where it writes (`CliIo`, replaceable in tests), the configuration it reads once, its
 * logger, graceful shutdown on signals, and the refusal naming the running server that holds the state directory.
 */
import { type Config, loadConfig, readEnvironment } from '../config.ts';
import { AppError } from '../domain/errors.ts';
import type { ApplicationLogger } from '../main.ts';
import { createLogger } from '../observability/log.ts';
import type { OriginalFlags } from '../original/original-flags.ts';
import { isStateDirInUse, runningServer } from './running-server.ts';

/** Where the commands write; replaceable in tests. */
export interface CliIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Registers the shutdown signal handlers of `serve` / `chat`. */
  onSignal(signal: 'SIGINT' | 'SIGTERM', handler: () => void): void;
  exit(code: number): void;
  /** Settings given as the original PromptPipe's flags (`--api-addr`…, see runCli), over the environment. */
  originalFlags?: Pick<OriginalFlags, 'settings' | 'notes'>;
}

export const processIo: CliIo = {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  onSignal: (signal, handler) => process.on(signal, handler),
  exit: (code) => process.exit(code),
};

export function readConfig(io: CliIo): Config {
  const flags = io.originalFlags;
  return loadConfig({ ...readEnvironment(), ...flags?.settings }, { notes: flags?.notes ?? [] });
}

export function logger(config: Config, destination: 'stdout' | 'stderr' = 'stdout'): ApplicationLogger {
  return createLogger({ level: config.logLevel, destination });
}

/**
 * One-shot commands (list, enroll, import, export) print their own result: the server's start-up warnings (no model,
 * no webhook URL) are not about the command, so only errors are logged unless LOG_LEVEL asks for debug or trace.
 */
export function commandLogger(config: Config): ApplicationLogger {
  const level = config.logLevel === 'info' || config.logLevel === 'warn' ? 'error' : config.logLevel;
  return createLogger({ level, destination: 'stderr' });
}

/** A first signal shuts down gracefully; a second one, while that is under way, exits at once. */
export function onShutdownSignals(io: CliIo, log: ApplicationLogger, shutdown: () => Promise<void>): void {
  let shuttingDown = false;
  const handle = (): void => {
    if (shuttingDown) {
      log.warn({}, 'second signal: exiting without waiting');
      io.exit(1);
      return;
    }
    shuttingDown = true;
    log.info({}, 'shutting down: finishing the work in flight (signal again to force)');
    shutdown().then(
      () => io.exit(0),
      (error: unknown) => {
        log.error({ error: String(error) }, 'shutdown failed');
        io.exit(1);
      },
    );
  };
  io.onSignal('SIGINT', handle);
  io.onSignal('SIGTERM', handle);
}

/** The refusal of a command that needs the state directory the running server holds, saying what to do instead. */
export function ownsStateDir(error: unknown, config: Config, command: string, instead: string): unknown {
  if (!isStateDirInUse(error)) return error;
  const server = runningServer(config);
  const where = server ? ` (pid ${server.pid}, ${server.apiUrl})` : '';
  return new AppError(
    'conflict',
    `${command} needs the state directory ${config.storage.stateDir}, which the running server${where} holds: ` +
      `${instead}. (SQLite allows one process per state directory; reading commands such as "participants list" ` +
      'and "export" work beside the server.)',
  );
}
