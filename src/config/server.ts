/**
 * The server's own settings: where it listens, its public URL, the dashboard session, the database, several instances
 * on one PostgreSQL, the outbound proxy and the log level. Plain settings: the adapters map them to their options.
 */
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type { ConfigReader } from './reader.ts';

/** When SQLite commits reach the disk: see `store/sqlite/sqlite-store.ts`. */
export type SqliteSynchronousSetting = 'group' | 'full' | 'normal';

/** The proxy variables of `NODE_USE_ENV_PROXY` (lower case wins, as with curl); '' when unset. */
export interface HttpProxySettings {
  httpProxy: string;
  httpsProxy: string;
  noProxy: string;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The shortest `PROMPTPIPE_JOB_LEASE`: its renewal every third of it is then still once a second. */
export const MINIMUM_JOB_LEASE_MS = 3_000;

export interface ServerSettings {
  api: { host: string; port: number; token: string | undefined; bodyLimitBytes: number };
  /**
   * `PROMPTPIPE_PUBLIC_URL`: the server's externally visible base URL (http or https, no trailing slash), e.g.
   * `https://coach.example.org`. Web-chat links (`chat_url`) are absolute with it; an https URL makes the dashboard's
   * session cookie `Secure`.
   */
  publicUrl: string | undefined;
  dashboard: {
    /** `DASHBOARD_SESSION_IDLE_TIMEOUT`: a dashboard session unused this long is signed out. */
    sessionIdleTimeoutMs: number;
  };
  storage: {
    stateDir: string;
    databaseUrl: string | undefined;
    /**
     * When SQLite commits reach the disk (`SQLITE_SYNCHRONOUS`): `group` (default) syncs before anything is
     * acknowledged or sent; `full` syncs every commit; `normal` only at checkpoints. See sqlite-store.ts.
     */
    sqliteSynchronous: SqliteSynchronousSetting;
    /** `DATABASE_POOL_SIZE`: pooled PostgreSQL connections of this instance (plus one for coordination). */
    poolSize: number;
    /**
     * TEST ONLY (`PROMPTPIPE_TEST_DASHBOARD_READ_GATE`, made absolute): on SQLite, the dashboard's reads wait while this
     * file exists (on their worker thread), so a test can show a turn completing during a slow dashboard read.
     */
    dashboardReadGate: string | undefined;
  };
  /** Several instances on one PostgreSQL (docs/deployment.md). */
  cluster: {
    /** `PROMPTPIPE_INSTANCE_ID`: names this process in /health, logs and job leases. Default hostname-pid. */
    instanceId: string;
    /**
     * `PROMPTPIPE_JOB_LEASE`: how long a claimed job belongs to its instance without a renewal (renewed every third of
     * it, at least every 10 s, while the job runs) before another may take it over. Default 30 s; at least 3 s.
     */
    jobLeaseMs: number;
    /** `PROMPTPIPE_RECOVERY_INTERVAL`: how often unprocessed inbound messages left by a dead instance are looked for. */
    recoveryIntervalMs: number;
  };
  logLevel: LogLevel;
  http: {
    /**
     * `NODE_USE_ENV_PROXY=1`: outbound calls (the model, the providers) go through `HTTP_PROXY` / `HTTPS_PROXY`, except
     * to the hosts of `NO_PROXY`, as Node's own fetch does with that setting. Undefined: no proxy.
     */
    proxy: HttpProxySettings | undefined;
  };
}

export function readServerSettings(read: ConfigReader): ServerSettings {
  const apiAddress = read.string('API_ADDR') ?? ':8080';
  const listen = parseListenAddress(apiAddress);
  if (!listen) read.problems.push(`API_ADDR must look like ":8080" or "127.0.0.1:8080" (got "${apiAddress}")`);
  const publicUrl = read.string('PROMPTPIPE_PUBLIC_URL');
  const publicUrlProblem = publicUrl === undefined ? undefined : baseUrlProblem(publicUrl);
  if (publicUrlProblem) read.problems.push(`PROMPTPIPE_PUBLIC_URL ${publicUrlProblem} (got "${publicUrl}")`);
  const dashboardReadGate = read.string('PROMPTPIPE_TEST_DASHBOARD_READ_GATE');
  const settings: ServerSettings = {
    api: {
      host: listen?.host ?? '0.0.0.0',
      port: listen?.port ?? 8080,
      token: read.string('PROMPTPIPE_API_TOKEN'),
      bodyLimitBytes: read.number(
        'API_BODY_LIMIT_BYTES',
        1_048_576,
        (n) => Number.isInteger(n) && n > 0,
        'a positive integer',
      ),
    },
    publicUrl: publicUrl?.replace(/\/+$/, ''),
    dashboard: { sessionIdleTimeoutMs: read.duration('DASHBOARD_SESSION_IDLE_TIMEOUT', '8h') },
    storage: {
      stateDir: read.string('PROMPTPIPE_STATE_DIR') ?? './data',
      databaseUrl: read.string('DATABASE_URL'),
      sqliteSynchronous: read.oneOf('SQLITE_SYNCHRONOUS', ['group', 'full', 'normal'] as const, 'group'),
      poolSize: read.number('DATABASE_POOL_SIZE', 10, (n) => Number.isInteger(n) && n > 0, 'a positive integer'),
      dashboardReadGate: dashboardReadGate === undefined ? undefined : resolve(dashboardReadGate),
    },
    cluster: {
      instanceId: read.string('PROMPTPIPE_INSTANCE_ID') ?? `${hostname()}-${process.pid}`,
      jobLeaseMs: read.duration('PROMPTPIPE_JOB_LEASE', '30s'),
      recoveryIntervalMs: read.duration('PROMPTPIPE_RECOVERY_INTERVAL', '30s'),
    },
    logLevel: read.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    http: { proxy: readProxySettings(read) },
  };
  return settings;
}

/** The durations that must be positive; checked once every setting was read (their problems come last). */
export function checkServerDurations(read: ConfigReader, settings: ServerSettings, webhookToleranceMs: number): void {
  for (const [name, value] of [
    ['PROMPTPIPE_JOB_LEASE', settings.cluster.jobLeaseMs],
    ['PROMPTPIPE_RECOVERY_INTERVAL', settings.cluster.recoveryIntervalMs],
    ['DASHBOARD_SESSION_IDLE_TIMEOUT', settings.dashboard.sessionIdleTimeoutMs],
    ['PROMPTPIPE_WEBHOOK_TOLERANCE', webhookToleranceMs],
  ] as const) {
    if (value <= 0) read.problems.push(`${name} must be a positive duration such as 30s or 10m`);
  }
  // The heartbeat renews at most once a second: below 3 s it would no longer come every third of the lease, and one
  // late renewal could let another instance take over a job that is still running.
  if (settings.cluster.jobLeaseMs > 0 && settings.cluster.jobLeaseMs < MINIMUM_JOB_LEASE_MS) {
    read.problems.push('PROMPTPIPE_JOB_LEASE must be at least 3s (the lease is renewed every third of it)');
  }
}

/** Splits `API_ADDR` (":8080", "127.0.0.1:8080", "[::1]:8080", "8080") into host and port. */
export function parseListenAddress(address: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]:|([^:]*):)?(\d+)$/.exec(address.trim());
  if (!match) return undefined;
  const port = Number(match[3]);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) return undefined;
  const host = match[1] ?? match[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port };
}

/** Why `value` is not an absolute http(s) base URL, or undefined when it is one. */
function baseUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL such as https://coach.example.org';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must start with https:// or http://';
  if (url.search || url.hash || url.username || url.password) {
    return 'must be a base URL without query, fragment or credentials';
  }
  return undefined;
}

/** The proxy variables, read only when `NODE_USE_ENV_PROXY` asks for them (lower case wins, as with curl). */
function readProxySettings(read: ConfigReader): HttpProxySettings | undefined {
  const enabled = read.shared('NODE_USE_ENV_PROXY');
  if (enabled === undefined || ['0', 'false', 'no', 'off'].includes(enabled.toLowerCase())) return undefined;
  const either = (name: string) => read.shared(name.toLowerCase()) ?? read.shared(name) ?? '';
  const settings = { httpProxy: either('HTTP_PROXY'), httpsProxy: either('HTTPS_PROXY'), noProxy: either('NO_PROXY') };
  for (const name of ['httpProxy', 'httpsProxy'] as const) {
    const proxy = settings[name];
    if (proxy && !/^https?:$/.test(URL.canParse(proxy) ? new URL(proxy).protocol : '')) {
      read.problems.push(
        `${name === 'httpProxy' ? 'HTTP_PROXY' : 'HTTPS_PROXY'} must be an http(s) URL (got "${proxy}")`,
      );
    }
  }
  if (!settings.httpProxy && !settings.httpsProxy) {
    read.problems.push('NODE_USE_ENV_PROXY is set, but neither HTTP_PROXY nor HTTPS_PROXY names a proxy');
  }
  return settings;
}
