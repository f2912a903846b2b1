/**
 * The connection lease port: at most one PromptPipe instance holds the WhatsApp connection of a session at a time
 * (WhatsApp allows one connection per linked device; a second one replaces the first, and both would fight).
 *
 * Adapters: the in-process lease here (SQLite: one process owns the database file) and a PostgreSQL advisory lock
 * (`src/store/postgres/postgres-connection-lease.ts`) for several instances on one database.
 */
export interface ConnectionLease {
  /** True when this instance now holds the lease. `onLost` is called if it is lost later (database connection drop). */
  tryAcquire(onLost: () => void): Promise<boolean>;
  release(): Promise<void>;
  /** Releases and frees resources (the dedicated connection). */
  close(): Promise<void>;
}

/** SQLite: one process owns the database, so its one supervisor always holds the lease. */
export function createInProcessLease(): ConnectionLease {
  return {
    tryAcquire: async () => true,
    release: async () => undefined,
    close: async () => undefined,
  };
}
