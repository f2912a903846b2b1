import { type Kysely, sql } from 'kysely';
import { AppError } from '../../domain/errors.ts';
import type { Store, StoreRepositories } from '../store.ts';
import { createAlertRepository } from './alert-repository.ts';
import { createAllocationRepository } from './allocation-repository.ts';
import { createAuditRepository } from './audit-repository.ts';
import { createBroadcastRepository } from './broadcast-repository.ts';
import { createConversationHistoryRepository } from './conversation-history-repository.ts';
import type { Database } from './database.ts';
import { createDecisionRepository } from './decision-repository.ts';
import { createDeliveryRepository } from './delivery-repository.ts';
import { createEventRepository } from './event-repository.ts';
import { createFlowStateRepository } from './flow-state-repository.ts';
import { createInboundMessageRepository } from './inbound-message-repository.ts';
import { createJobRepository } from './job-repository.ts';
import { createLlmCallRepository } from './llm-call-repository.ts';
import { createLlmOutageRepository } from './llm-outage-repository.ts';
import { createOriginalRecordRepository } from './original-records-repository.ts';
import { createParticipantRepository } from './participant-repository.ts';
import { createRatingRepository } from './rating-repository.ts';
import { createResearchReadRepository } from './research-read-repository.ts';
import { createRosterRepository } from './roster-repository.ts';
import { createStaffRepository } from './staff-repository.ts';
import type { StoreDialect } from './store-dialect.ts';
import { createStudyDayRepository } from './study-day-repository.ts';
import { createTakeoverRepository } from './takeover-repository.ts';
import { createTelegramRepository } from './telegram-repository.ts';
import { createTranscriptRepository } from './transcript-repository.ts';
import { createWebChatTokenRepository } from './web-chat-token-repository.ts';
import { createWhatsAppAuthRepository } from './whatsapp-auth-repository.ts';
import { createWhatsAppMessageRepository } from './whatsapp-message-repository.ts';

/** The repositories bound to `db`, which is either the whole database or one open transaction. */
export function createRepositories(db: Kysely<Database>, dialect: StoreDialect): StoreRepositories {
  return {
    participants: createParticipantRepository(db),
    flowStates: createFlowStateRepository(db),
    history: createConversationHistoryRepository(db),
    transcript: createTranscriptRepository(db),
    events: createEventRepository(db),
    jobs: createJobRepository(db, dialect),
    llmCalls: createLlmCallRepository(db),
    llmOutages: createLlmOutageRepository(db),
    broadcasts: createBroadcastRepository(db),
    research: createResearchReadRepository(db),
    inbound: createInboundMessageRepository(db),
    whatsappAuth: createWhatsAppAuthRepository(db),
    whatsappMessages: createWhatsAppMessageRepository(db),
    deliveries: createDeliveryRepository(db),
    webChatTokens: createWebChatTokenRepository(db),
    roster: createRosterRepository(db, dialect),
    studyDays: createStudyDayRepository(db, dialect),
    originalRecords: createOriginalRecordRepository(db),
    allocations: createAllocationRepository(db, dialect),
    decisions: createDecisionRepository(db),
    telegram: createTelegramRepository(db),
    staff: createStaffRepository(db),
    audit: createAuditRepository(db),
    alerts: createAlertRepository(db),
    takeovers: createTakeoverRepository(db),
    ratings: createRatingRepository(db),
  };
}

/**
 * The `Store` both adapters return, given an open, migrated Kysely instance. The adapter owns connection setup and
 * migrations; everything after that is the same for both databases.
 *
 * Transactions: the repositories handed to `fn` are bound to the transaction's connection. They are also a `Store`
 * whose `transaction()` simply runs the inner function in the same transaction, so code written against `Store` can
 * be called with them and joins the outer transaction.
 *
 * The adapters put the ambient unit of work above this store (`unit-of-work.ts`): a call on the store inside `fn`
 * joins the transaction, and a query that reaches this layer's own database from inside it throws instead of waiting
 * for the connection the transaction holds.
 */
export function createKyselyStore(options: {
  db: Kysely<Database>;
  dialect: StoreDialect;
  /** Makes earlier commits durable (SQLite group commit); without it every commit already is. */
  durable?: () => Promise<void>;
  /** Runs before the database closes (the group commit's last sync). */
  beforeClose?: () => Promise<void>;
}): Store {
  const { db, dialect } = options;
  return {
    dialect: dialect.name,
    ...createRepositories(db, dialect),
    async transaction(fn) {
      const committed: (() => void)[] = [];
      const result = await db
        .transaction()
        .execute((transaction) => fn(createTransactionStore(transaction, dialect, committed)));
      for (const callback of committed) callback();
      return result;
    },
    afterCommit(callback) {
      callback();
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    durable: options.durable ?? (() => Promise.resolve()),
    async close() {
      try {
        await options.beforeClose?.();
      } finally {
        await db.destroy();
      }
    },
  };
}

function createTransactionStore(
  transaction: Kysely<Database>,
  dialect: StoreDialect,
  committed: (() => void)[],
): Store {
  const store: Store = {
    dialect: dialect.name,
    ...createRepositories(transaction, dialect),
    transaction: (fn) => fn(store),
    afterCommit(callback) {
      committed.push(callback);
    },
    async ping() {
      await sql`select 1`.execute(transaction);
    },
    // Inside a transaction nothing is committed yet; the caller makes it durable after the commit.
    durable: () => Promise.resolve(),
    close() {
      return Promise.reject(new AppError('internal', 'close() called on a transaction; close the store instead'));
    },
  };
  return store;
}
