import type { Expression, Kysely, SelectQueryBuilder } from 'kysely';
import type { SchemaDialect } from '../migrations/schema-dialect.ts';
import type { Database } from './database.ts';

/** A select of claimable job ids, before the dialect adds its row locking. */
export type ClaimCandidatesQuery<Row = { id: string }> = SelectQueryBuilder<Database, 'jobs', Row>;

/**
 * Everything that differs between SQLite and PostgreSQL. The repositories in this folder are written once against
 * `Kysely<Database>` and call these hooks only where portable SQL does not exist.
 */
export interface StoreDialect {
  readonly name: 'sqlite' | 'postgres';
  readonly schema: SchemaDialect;
  /**
   * Locks the rows of a claim so that concurrent claimers skip them (`FOR UPDATE SKIP LOCKED` on PostgreSQL). SQLite
   * has a single writer, so its hook returns the query unchanged.
   */
  lockClaimCandidates<Row>(query: ClaimCandidatesQuery<Row>): ClaimCandidatesQuery<Row>;
  /** The value of `jobs.enqueue_order` for a new job, or undefined when the database numbers it itself. */
  nextJobEnqueueOrder(db: Kysely<Database>): Expression<number> | undefined;
  /** The value of `inbound_messages.arrival_order` for a new message, or undefined when the database numbers it. */
  nextInboundArrivalOrder(db: Kysely<Database>): Expression<number> | undefined;
  /**
   * Tells the other server instances that a job was enqueued (PostgreSQL `NOTIFY`, delivered when the transaction
   * commits); nothing on SQLite, which has one process.
   */
  announceJobEnqueued(db: Kysely<Database>): Promise<void>;
}
