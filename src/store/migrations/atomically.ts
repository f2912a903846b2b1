import type { Kysely } from 'kysely';

/**
 * Runs a migration's steps in one transaction. Kysely runs SQLite migrations outside a transaction (PostgreSQL's
 * already run in one, which is joined): a crash halfway would leave some steps done and the migration unrecorded, so
 * the next start would fail on them. SQLite's DDL is transactional, so the whole migration can commit or not at all.
 */
export function atomically(db: Kysely<unknown>, work: (db: Kysely<unknown>) => Promise<void>): Promise<void> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}
