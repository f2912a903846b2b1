/**
 * The ambient unit of work: `store.transaction(fn)` opens one database transaction and, for as long as `fn` runs,
 * makes it the current unit of work of its asynchronous flow (AsyncLocalStorage, as the participant lock keeps its
 * holders). Every repository call on the store made in that flow joins it, so code that writes through the store
 * needs no transaction handle in its signature: a messenger, a tool, a timer and the turn recorder all write through
 * the one store, and whoever opened the unit of work decides what commits together. A nested `transaction(fn)` joins
 * the current unit of work; `afterCommit` inside one waits for its commit.
 *
 * Two layers, both per database:
 * - {@link UnitOfWorkScope.route}, the outermost layer of a store: routes each repository call to the current unit
 *   of work's repositories, or to the store's own outside one. Above the caches, so a write joined this way is seen by
 *   their transaction rules exactly as one made through the transaction's own repositories.
 * - {@link UnitOfWorkScope.guard}, around the Kysely driver: a connection taken from the database's pool (SQLite's one
 *   connection, PostgreSQL's pool) by code that is inside a unit of work of that same database is a mistake: on
 *   SQLite it waits forever for the connection its own transaction holds, on PostgreSQL it runs outside the
 *   transaction. The guard throws {@link OUTER_STORE_IN_UNIT_OF_WORK} instead. Only code below the routing layer can
 *   get there (a repository captured from an inner layer, a raw Kysely query); a transaction's own statements use the
 *   connection it took before the unit of work began, and never pass through the guard.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DatabaseConnection, Dialect, Driver } from 'kysely';
import { AppError } from '../domain/errors.ts';
import type { Store, StoreRepositories } from './store.ts';

interface UnitOfWork {
  readonly scope: UnitOfWorkScope;
  /** The transaction's store: its repositories are bound to the transaction's connection. */
  readonly store: Store;
  /** False once `fn` has returned: work it left running in the background no longer joins. */
  active: boolean;
}

const current = new AsyncLocalStorage<UnitOfWork>();

export const OUTER_STORE_IN_UNIT_OF_WORK =
  'the outer store was used inside a unit of work: this query would wait for the transaction that waits for it ' +
  '(SQLite) or run outside it (PostgreSQL). Write through the store the unit of work routes (`store.…` or the `tx` ' +
  'handed to `transaction`), never through a repository or Kysely instance taken from below it';

export interface UnitOfWorkScope {
  /** The outermost layer of the database's store (see the module comment). */
  route(store: Store): Store;
  /** Kysely's dialect with the guard around its driver (see the module comment). */
  guard(dialect: Dialect): Dialect;
  /** Whether the calling flow is inside a unit of work of this database. */
  active(): boolean;
}

export interface UnitOfWorkScopeOptions {
  /** Whether the guard checks connections (default true: the check is one AsyncLocalStorage read per checkout). */
  guard?: boolean;
}

/** One database's unit-of-work scope: made by the adapter, which applies both layers. */
export function createUnitOfWorkScope(options: UnitOfWorkScopeOptions = {}): UnitOfWorkScope {
  const scope: UnitOfWorkScope = {
    route: (store) => routedStore(scope, store),
    guard: (dialect) => (options.guard === false ? dialect : guardedDialect(dialect, scope)),
    active: () => currentOf(scope) !== undefined,
  };
  return scope;
}

/** Whether the calling flow is inside a unit of work (of any database). */
export function insideUnitOfWork(): boolean {
  return current.getStore()?.active === true;
}

/**
 * Runs `callback` once the calling flow's unit of work commits (never if it rolls back), or at once outside one: for
 * code that has no store of its own to ask (a test double of a port that writes through the store).
 */
export function afterCurrentCommit(callback: () => void): void {
  const unit = current.getStore();
  if (unit?.active) unit.store.afterCommit(callback);
  else callback();
}

function currentOf(scope: UnitOfWorkScope): UnitOfWork | undefined {
  const unit = current.getStore();
  return unit?.active && unit.scope === scope ? unit : undefined;
}

type RepositoryKey = keyof StoreRepositories;
const STORE_MEMBERS = new Set(['dialect', 'transaction', 'afterCommit', 'ping', 'durable', 'close']);

/** Every method name of an object (a repository, a driver), its prototype chain's included (it may be a class). */
function methodNames(repository: object): string[] {
  const names = new Set<string>();
  for (let target: object | null = repository; target && target !== Object.prototype; ) {
    for (const name of Object.getOwnPropertyNames(target)) {
      if (name !== 'constructor' && typeof (repository as Record<string, unknown>)[name] === 'function') {
        names.add(name);
      }
    }
    target = Object.getPrototypeOf(target) as object | null;
  }
  return [...names];
}

function routedRepository(scope: UnitOfWorkScope, outside: Store, key: RepositoryKey): object {
  const repository = outside[key] as unknown as Record<string, unknown>;
  const routed: Record<string, unknown> = {};
  for (const name of Object.keys(repository)) {
    if (typeof repository[name] !== 'function') routed[name] = repository[name];
  }
  for (const name of methodNames(repository)) {
    routed[name] = (...args: unknown[]) => {
      const target = (currentOf(scope)?.store ?? outside)[key] as unknown as Record<
        string,
        (...values: unknown[]) => unknown
      >;
      return target[name]?.(...args);
    };
  }
  return routed;
}

function routedStore(scope: UnitOfWorkScope, outside: Store): Store {
  const repositories: Record<string, object> = {};
  for (const key of Object.keys(outside)) {
    if (STORE_MEMBERS.has(key)) continue;
    const value = (outside as unknown as Record<string, unknown>)[key];
    if (typeof value === 'object' && value !== null) {
      repositories[key] = routedRepository(scope, outside, key as RepositoryKey);
    }
  }
  return {
    ...(repositories as unknown as StoreRepositories),
    dialect: outside.dialect,
    async transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
      const joined = currentOf(scope);
      if (joined) return fn(joined.store);
      return outside.transaction(async (tx) => {
        const unit: UnitOfWork = { scope, store: tx, active: true };
        try {
          return await current.run(unit, () => fn(tx));
        } finally {
          unit.active = false;
        }
      });
    },
    afterCommit(callback) {
      (currentOf(scope)?.store ?? outside).afterCommit(callback);
    },
    ping: () => (currentOf(scope)?.store ?? outside).ping(),
    // Whatever was committed before the call: the unit of work's own writes are made durable by its caller after it.
    durable: () => outside.durable(),
    close: () => outside.close(),
  };
}

function guardedDialect(dialect: Dialect, scope: UnitOfWorkScope): Dialect {
  // Kysely queues for a single-connection database (SQLite) before the driver is asked for the connection, so the
  // queue moves into the guarded driver, behind the check: a flow that would wait for its own transaction is told so.
  const singleConnection = dialect.createAdapter().supportsMultipleConnections === false;
  return {
    createAdapter() {
      const adapter = dialect.createAdapter();
      if (!singleConnection) return adapter;
      // The adapter itself underneath (`instanceof` still holds), with the one property overridden.
      return Object.create(adapter, { supportsMultipleConnections: { value: true } }) as typeof adapter;
    },
    createDriver: () => guardedDriver(dialect.createDriver(), scope, singleConnection ? createMutex() : undefined),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}

interface Mutex {
  /** Undefined when the lock was free and is now held; else a promise of the hand-over. */
  lock(): Promise<void> | undefined;
  unlock(): void;
}

/**
 * One holder at a time, the others in turn (as Kysely's own queue for a single-connection database). Taking a free
 * lock allocates nothing: every query outside a transaction takes it.
 */
function createMutex(): Mutex {
  let held = false;
  const waiting: (() => void)[] = [];
  return {
    lock() {
      if (!held) {
        held = true;
        return undefined;
      }
      return new Promise((resolve) => waiting.push(resolve));
    },
    unlock() {
      const next = waiting.shift();
      // Handed straight to the next in line, so nobody can take it in between.
      if (next) next();
      else held = false;
    },
  };
}

/** Every method of an object, its prototype chain's included, bound to it once. */
function boundMethods(target: object): Record<string, unknown> {
  const methods: Record<string, unknown> = {};
  for (const name of methodNames(target)) {
    methods[name] = ((target as Record<string, unknown>)[name] as (...values: unknown[]) => unknown).bind(target);
  }
  return methods;
}

function guardedDriver(driver: Driver, scope: UnitOfWorkScope, mutex: Mutex | undefined): Driver {
  const acquireConnection = async (
    ...options: Parameters<Driver['acquireConnection']>
  ): Promise<DatabaseConnection> => {
    if (currentOf(scope)) throw new AppError('internal', OUTER_STORE_IN_UNIT_OF_WORK);
    if (!mutex) return driver.acquireConnection(...options);
    const handOver = mutex.lock();
    if (handOver) await handOver;
    try {
      return await driver.acquireConnection(...options);
    } catch (error) {
      mutex.unlock();
      throw error;
    }
  };
  const releaseConnection = async (...options: Parameters<Driver['releaseConnection']>): Promise<void> => {
    try {
      await driver.releaseConnection(...options);
    } finally {
      mutex?.unlock();
    }
  };
  // A plain object rather than a Proxy: Kysely reaches the driver on every query.
  return { ...boundMethods(driver), acquireConnection, releaseConnection } as unknown as Driver;
}
