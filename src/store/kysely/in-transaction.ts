import type { Kysely } from 'kysely';
import type { Database } from './database.ts';

/**
 * Runs `work` atomically: in the caller's transaction when `db` already is one (Kysely cannot nest transactions, and
 * joining is what the port promises), otherwise in a new one.
 */
export function inTransaction<T>(
  db: Kysely<Database>,
  work: (transaction: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}
