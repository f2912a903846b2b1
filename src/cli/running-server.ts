/**
 * CLI commands that change the study while `promptpipe serve` owns the SQLite state directory go through that
 * server's HTTP API instead: the server wrote its address into the state directory's holder file when it started
 * listening, and the command authenticates with the same `PROMPTPIPE_API_TOKEN` the configuration gives it. (Reading
 * commands open the database read-only beside the server instead: `openStore(…, { besideServer: 'read' })`.)
 */
import type { Config } from '../config.ts';
import { AppError } from '../domain/errors.ts';
import { readStateDirHolder } from '../store/sqlite/state-dir-lock.ts';

export interface RunningServer {
  readonly apiUrl: string;
  readonly pid: number;
}

/** Whether `error` is the refusal of a state directory another process holds. */
export function isStateDirInUse(error: unknown): boolean {
  return error instanceof AppError && error.code === 'conflict' && /state directory .* is in use/.test(error.message);
}

/** The server holding this configuration's SQLite state directory, when it announced its API address. */
export function runningServer(config: Config): RunningServer | undefined {
  if (config.storage.databaseUrl) return undefined;
  const holder = readStateDirHolder(config.storage.stateDir);
  return holder?.api_url ? { apiUrl: holder.api_url, pid: holder.pid } : undefined;
}

export interface ServerAnswer {
  status: number;
  body: { status?: string; message?: string; result?: unknown };
}

/** One request to the running server's API, with the configured token. Network failures say which server. */
export async function callRunningServer(
  server: RunningServer,
  config: Config,
  request: { method: 'POST'; path: string; body: string | Uint8Array; contentType: string },
): Promise<ServerAnswer> {
  let response: Response;
  try {
    response = await fetch(`${server.apiUrl}${request.path}`, {
      method: request.method,
      headers: {
        'content-type': request.contentType,
        ...(config.api.token ? { authorization: `Bearer ${config.api.token}` } : {}),
      },
      body: request.body,
    });
  } catch (error) {
    throw new AppError(
      'unavailable',
      `the server running on this state directory (pid ${server.pid}) does not answer at ${server.apiUrl}: ` +
        `${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const body = (await response.json().catch(() => ({}))) as ServerAnswer['body'];
  if (response.status === 401) {
    throw new AppError(
      'invalid_input',
      `the server running on this state directory (${server.apiUrl}) refused the API token: set the same ` +
        'PROMPTPIPE_API_TOKEN for this command as for the server',
    );
  }
  return { status: response.status, body };
}

/**
 * Opens the application in this process, or, when the state directory is held by a server that announced its API
 * address, returns that server instead (the command then goes through its API). Any other failure is thrown.
 */
export async function openOrFindServer<App>(
  config: Config,
  open: () => Promise<App>,
): Promise<{ app: App; server?: undefined } | { app?: undefined; server: RunningServer }> {
  try {
    return { app: await open() };
  } catch (error) {
    const server = isStateDirInUse(error) ? runningServer(config) : undefined;
    if (!server) throw error;
    return { server };
  }
}
