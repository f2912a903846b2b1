import type { Kysely } from 'kysely';
import { type Migration, Migrator } from 'kysely/migration';
import * as initial from './001-initial.ts';
import * as channels from './002-channels.ts';
import * as researchData from './003-research-data.ts';
import * as scaleOut from './005-scale-out.ts';
import * as whatsappWeb from './006-whatsapp-web.ts';
import * as language from './007-language.ts';
import * as webChat from './008-webchat.ts';
import * as jobIndexes from './010-job-indexes.ts';
import * as jobClaimOrderIndex from './011-job-claim-order-index.ts';
import * as turnLookupIndexes from './012-turn-lookup-indexes.ts';
import * as jobOrderCheckIndex from './013-job-order-check-index.ts';
import * as activeJobIndexes from './014-active-job-indexes.ts';
import * as receivedInboundIndexes from './015-received-inbound-indexes.ts';
import * as conversationMessages from './016-conversation-messages.ts';
import * as leanTurnIndexes from './017-lean-turn-indexes.ts';
import * as llmOutages from './018-llm-outages.ts';
import * as telegram from './019-telegram.ts';
import * as jobHolds from './020-job-holds.ts';
import * as originalRecords from './021-original-records.ts';
import * as studyDaySummary from './022-study-day-summary.ts';
import * as staffAccounts from './030-staff-accounts.ts';
import * as trialAllocations from './040-trial-allocations.ts';
import * as trialDecisions from './041-trial-decisions.ts';
import * as safetyAlerts from './050-safety-alerts.ts';
import * as conversationTakeovers from './051-conversation-takeovers.ts';
import * as heldCoachTurns from './052-held-coach-turns.ts';
import * as ratings from './060-ratings.ts';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * Every migration, by name. Names sort in application order; a static list rather than a folder scan, so nothing is
 * read from disk at run time and a bundled build keeps working.
 */
function migrationsFor(dialect: SchemaDialect): Record<string, Migration> {
  return {
    '001-initial': { up: (db) => initial.up(db, dialect) },
    '002-channels': { up: (db) => channels.up(db, dialect) },
    '003-research-data': { up: (db) => researchData.up(db, dialect) },
    '005-scale-out': { up: (db) => scaleOut.up(db, dialect) },
    '006-whatsapp-web': { up: (db) => whatsappWeb.up(db, dialect) },
    '007-language': { up: (db) => language.up(db) },
    '008-webchat': { up: (db) => webChat.up(db, dialect) },
    '010-job-indexes': { up: (db) => jobIndexes.up(db) },
    '011-job-claim-order-index': { up: (db) => jobClaimOrderIndex.up(db) },
    '012-turn-lookup-indexes': { up: (db) => turnLookupIndexes.up(db) },
    '013-job-order-check-index': { up: (db) => jobOrderCheckIndex.up(db) },
    '014-active-job-indexes': { up: (db) => activeJobIndexes.up(db) },
    '015-received-inbound-indexes': { up: (db) => receivedInboundIndexes.up(db) },
    '016-conversation-messages': { up: (db) => conversationMessages.up(db, dialect) },
    '017-lean-turn-indexes': { up: (db) => leanTurnIndexes.up(db) },
    '018-llm-outages': { up: (db) => llmOutages.up(db, dialect) },
    '019-telegram': { up: (db) => telegram.up(db, dialect) },
    '020-job-holds': { up: (db) => jobHolds.up(db) },
    '021-original-records': { up: (db) => originalRecords.up(db, dialect) },
    '030-staff-accounts': { up: (db) => staffAccounts.up(db, dialect) },
    '050-safety-alerts': { up: (db) => safetyAlerts.up(db, dialect) },
    '051-conversation-takeovers': { up: (db) => conversationTakeovers.up(db, dialect) },
    '052-held-coach-turns': { up: (db) => heldCoachTurns.up(db) },
    '060-ratings': { up: (db) => ratings.up(db, dialect) },
    '022-study-day-summary': { up: (db) => studyDaySummary.up(db, dialect) },
    '040-trial-allocations': { up: (db) => trialAllocations.up(db, dialect) },
    '041-trial-decisions': { up: (db) => trialDecisions.up(db, dialect) },
  };
}

/** Applies the migrations not yet applied (recorded in `kysely_migration`). Throws when one fails. */
export async function migrateToLatest(
  db: Kysely<unknown>,
  dialect: SchemaDialect,
  options: { schema?: string } = {},
): Promise<void> {
  const migrations = migrationsFor(dialect);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // Migrations are developed in parallel and each is independent of the others' tables, so a database that already
    // has a later-numbered one still takes an earlier one it lacks (instead of refusing to start).
    allowUnorderedMigrations: true,
    ...(options.schema === undefined ? {} : { migrationTableSchema: options.schema }),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`store migration ${failed} failed`, { cause: error });
  }
}

/** The migrations this version has that the database has not run (a reader that may not migrate checks this). */
export async function pendingMigrations(db: Kysely<unknown>, dialect: SchemaDialect): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrationsFor(dialect) },
    allowUnorderedMigrations: true,
  });
  const migrations = await migrator.getMigrations();
  return migrations.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}
