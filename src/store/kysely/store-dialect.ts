import type { Kysely } from 'kysely';
import type { SchemaDialect } from '../migrations/schema-dialect.ts';
import type { Database } from './database.ts';

/**
 * Everything that differs between SQLite and PostgreSQL. The repositories in this folder are written once against
 * `Kysely<Database>` and call these hooks only where portable SQL does not exist; the hot statements (sql/) write
 * each database's text out instead.
 */
export interface StoreDialect {
  readonly name: 'sqlite' | 'postgres';
  readonly schema: SchemaDialect;
  /**
   * Tells the other server instances that a job was enqueued (PostgreSQL `NOTIFY`, delivered when the transaction
   * commits); nothing on SQLite, which has one process.
   */
  announceJobEnqueued(db: Kysely<Database>): Promise<void>;
}
