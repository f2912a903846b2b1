/**
 * The storage port. Everything the engine, the scheduler and the server persist goes through it.
 *
 * Glossary:
 * - repository: one table's operations, e.g. `jobs`. The same repositories are offered inside a transaction.
 * - transaction (unit of work): `store.transaction(fn)` runs `fn` in one database transaction, and every call on the
 *   store made while `fn` runs, in its asynchronous flow, joins it (`unit-of-work.ts`); so does a nested call. Never
 *   hold a transaction across an LLM call or a channel send: on SQLite it blocks every other writer.
 * - transcript: the append-only, never-trimmed record of every message of a participant (study data).
 * - event: an audit record (`tool-called`, `state-changed`, `job-failed`, …).
 * - job: a durable timed task (reminder, daily prompt, outbound delivery…), claimed with a lease.
 *
 * The repositories are declared per consumer in `ports/` (the conversation, the inbound pipeline, the job queue, the
 * research reads, the roster, the channels, whatsapp-web's auth state) and in the feature files beside this one
 * (allocations, decisions, staff, safety, ratings, original records). A consumer that needs only a few of them takes
 * that narrow interface; `Store` is all of them with the transaction. Their types are re-exported here.
 *
 * Adapters: `sqlite/` (better-sqlite3) and `postgres/` (pg), both on Kysely. Every adapter passes
 * `test/store/store-contract.ts`.
 */
import type { AllocationRepository } from './allocations.ts';
import type { DecisionRepository } from './decisions.ts';
import type { OriginalRecordRepository } from './original-records.ts';
import type { ChannelRepositories } from './ports/channel-records.ts';
import type { ConversationRepositories } from './ports/conversation-store.ts';
import type { InboundRepositories } from './ports/inbound-store.ts';
import type { JobQueueRepositories } from './ports/job-queue.ts';
import type { ResearchRepositories } from './ports/research-reads.ts';
import type { RosterReadRepositories } from './ports/roster-reads.ts';
import type { WhatsAppRepositories } from './ports/whatsapp-auth.ts';
import type { RatingRepository } from './ratings-records.ts';
import type { AlertRepository, TakeoverRepository } from './safety-records.ts';
import type { AuditRepository, StaffRepository } from './staff-store.ts';

export type * from './ports/channel-records.ts';
export type * from './ports/conversation-store.ts';
export type * from './ports/inbound-store.ts';
export * from './ports/job-queue.ts';
export type * from './ports/research-reads.ts';
export type {
  AdherencePage,
  AdherenceQuery,
  AdherenceRow,
  ParticipantCounts,
  RosterFilter,
  RosterPage,
  RosterRepository,
  RosterRow,
  StudyDayFigures,
  StudyDayRepository,
  UsageFigures,
} from './ports/roster-reads.ts';
export type * from './ports/whatsapp-auth.ts';

export interface StoreRepositories
  extends ConversationRepositories,
    InboundRepositories,
    JobQueueRepositories,
    ResearchRepositories,
    RosterReadRepositories,
    WhatsAppRepositories,
    ChannelRepositories {
  /** The original PromptPipe's receipts, responses and response figures (`original-records.ts`). */
  readonly originalRecords: OriginalRecordRepository;
  /** A randomised trial's allocations and block states (`allocations.ts`). */
  readonly allocations: AllocationRepository;
  /** Micro-randomised decisions, one per decision point moment (`decisions.ts`). */
  readonly decisions: DecisionRepository;
  /** Staff accounts, their sessions and API tokens (`staff-store.ts`). */
  readonly staff: StaffRepository;
  /** The audit trail of what staff did: append-only. */
  readonly audit: AuditRepository;
  /** Staff alerts, their deliveries, participants under staff review (`safety-records.ts`). */
  readonly alerts: AlertRepository;
  /** Conversations taken over by staff (`safety-records.ts`). */
  readonly takeovers: TakeoverRepository;
  /** Human ratings of conversations with a rubric (`ratings-records.ts`). */
  readonly ratings: RatingRepository;
}

export interface Store extends StoreRepositories {
  readonly dialect: 'sqlite' | 'postgres';
  /**
   * Runs `fn` in one transaction: all of its writes commit together or none do. Calls on this store made inside `fn`
   * (in its asynchronous flow) join it, nested `transaction` calls too. `tx` is a `Store` bound to the transaction.
   */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
  /**
   * Runs `callback` once what was written so far is committed: at once outside a transaction; inside one, after the
   * outermost transaction commits, and never if it rolls back. For telling others about a commit (waking the job
   * runner for a job just enqueued), which must not happen before they can see it.
   */
  afterCommit(callback: () => void): void;
  /** Resolves when the database answers; rejects otherwise (health checks). */
  ping(): Promise<void>;
  /**
   * Resolves when every commit made before the call would survive a power loss. Called before anything outside may
   * learn of a commit: an HTTP response, a message handed to a channel. Immediate where every commit already is
   * durable (PostgreSQL; SQLite at `full`); on SQLite's default group commit one fsync serves every waiting caller.
   */
  durable(): Promise<void>;
  close(): Promise<void>;
}
