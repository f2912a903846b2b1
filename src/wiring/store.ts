/**
 * Storage: SQLite or PostgreSQL, the metrics over it, and on PostgreSQL the cluster coordinator and its participant
 * lock. The PostgreSQL modules (and `pg`) are imported only when used, like the channel SDKs: memory a SQLite
 * deployment does not pay for.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { AppError, errorMessage } from '../domain/errors.ts';
import type { Log } from '../domain/log.ts';
import { createMetrics, type Metrics } from '../observability/metrics.ts';
import { refuseOriginalDatabase } from '../original/original-database-guard.ts';
import { withEventMetrics } from '../store/event-metrics-store.ts';
import { createInProcessLock, type ParticipantLock } from '../store/participant-lock.ts';
import type { ClusterCoordinator } from '../store/postgres/postgres-coordinator.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { acquireStateDirLock, type StateDirLock } from '../store/sqlite/state-dir-lock.ts';
import type { Store } from '../store/store.ts';

export interface Storage {
  /** With event metrics. */
  store: Store;
  metrics: Metrics;
  coordinator: ClusterCoordinator | undefined;
  lock: ParticipantLock;
}

/** The store the configuration names (or the injected one), its metrics, and the lock one participant's work takes. */
export async function wireStorage(config: Config, log: Log, injected: Store | undefined): Promise<Storage> {
  const rawStore = injected ?? (await openStore(config, log));
  const metrics = createMetrics({ jobs: rawStore.jobs, collectProcessMetrics: true });
  const store = withEventMetrics(rawStore, metrics);
  // Several instances on one PostgreSQL: the participant lock, instance liveness, wake-ups and the manual clock go
  // through one dedicated connection (see postgres-coordinator.ts and docs/deployment.md).
  const coordinator = await openCoordinator(config, log, rawStore, injected !== undefined);
  const lock = coordinator?.lock ?? createInProcessLock();
  return { store, metrics, coordinator, lock };
}

/**
 * SQLite at `$PROMPTPIPE_STATE_DIR/promptpipe.db`, or PostgreSQL when `DATABASE_URL` is set; migrated on open.
 */
export async function openStore(
  config: Config,
  log: Log,
  options: {
    /**
     * `read`: when a running server holds the SQLite state directory, open its database read-only beside it (a CLI
     * listing or export) instead of refusing.
     */
    besideServer?: 'read';
  } = {},
): Promise<Store> {
  if (config.storage.databaseUrl) {
    await refuseOriginalDatabase(config.storage.databaseUrl);
    const { createPostgresStore } = await import('../store/postgres/postgres-store.ts');
    const store = await createPostgresStore({
      connectionString: config.storage.databaseUrl,
      maxConnections: config.storage.poolSize,
    });
    log.info({ database: 'postgres' }, 'database: PostgreSQL (DATABASE_URL), migrations applied');
    return store;
  }
  mkdirSync(config.storage.stateDir, { recursive: true });
  const filename = join(config.storage.stateDir, 'promptpipe.db');
  // SQLite is single-process: a second process on this state directory is refused here, naming the holder's pid.
  let stateDirLock: StateDirLock;
  try {
    stateDirLock = acquireStateDirLock(config.storage.stateDir);
  } catch (error) {
    if (options.besideServer !== 'read' || !(error instanceof AppError) || error.code !== 'conflict') throw error;
    log.info({ database: 'sqlite', filename }, 'reading the database beside the server that owns it (read-only)');
    return createSqliteStore({ filename, readOnly: true });
  }
  let store: Store;
  try {
    store = await createSqliteStore({
      filename,
      synchronous: config.storage.sqliteSynchronous,
      ...(config.storage.dashboardReadGate ? { dashboardReadGate: config.storage.dashboardReadGate } : {}),
    });
  } catch (error) {
    stateDirLock.release();
    throw error;
  }
  const synchronous = config.storage.sqliteSynchronous;
  log.info({ database: 'sqlite', filename, synchronous }, `database: SQLite at ${filename}, migrations applied`);
  if (synchronous === 'normal') {
    log.warn({}, 'SQLITE_SYNCHRONOUS=normal: a power loss may lose the last committed messages (a crash does not)');
  }
  const close = store.close;
  return Object.assign(store, {
    async close() {
      try {
        await close();
      } finally {
        stateDirLock.release();
      }
    },
  });
}

/** The cluster coordinator on PostgreSQL (unless the store was injected); undefined on SQLite (one process). */
async function openCoordinator(
  config: Config,
  log: Log,
  store: Store,
  injectedStore: boolean,
): Promise<ClusterCoordinator | undefined> {
  const { databaseUrl } = config.storage;
  if (!databaseUrl || injectedStore || store.dialect !== 'postgres') return undefined;
  const { createClusterCoordinator } = await import('../store/postgres/postgres-coordinator.ts');
  const coordinator = await createClusterCoordinator({
    connectionString: databaseUrl,
    instanceId: config.cluster.instanceId,
    onLost: (error) => {
      // The advisory locks went with the connection while turns may still run under them: stop at once and let
      // the other instances (or this one, restarted) take the work over. Crash-only is the safe answer here.
      log.error(
        { error: errorMessage(error), instanceId: config.cluster.instanceId },
        'lost the coordination connection to PostgreSQL (participant locks gone); exiting',
      );
      process.exit(1);
    },
    onError: (message, error) => log.error({ error: errorMessage(error) }, message),
  });
  log.info({ instanceId: config.cluster.instanceId, owner: coordinator.owner }, 'cluster coordination: PostgreSQL');
  return coordinator;
}
