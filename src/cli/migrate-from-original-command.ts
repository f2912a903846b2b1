/**
 * `promptpipe migrate-from-original --from <SQLite file | PostgreSQL DSN> [--apply] [--json]`: reads the original
 * PromptPipe's database, reports what will be imported and what cannot (a dry run by default: nothing is written),
 * then with `--apply` imports it in one transaction. Running it again imports nothing new. Thin: the work is in
 * `src/original/migration/`.
 */
import type { Config } from '../config.ts';
import { AppError } from '../domain/errors.ts';
import { type NewId, randomId } from '../domain/ids.ts';
import type { Log } from '../domain/log.ts';
import { applyMigration, type MigrationOutcome } from '../original/migration/apply-migration.ts';
import { planMigration } from '../original/migration/migration-plan.ts';
import { formatOutcome, formatPlan, summarisePlan } from '../original/migration/migration-report.ts';
import { readOriginalDatabase } from '../original/migration/original-database.ts';
import type { Store } from '../store/store.ts';
import { isStateDirInUse } from './running-server.ts';

export interface MigrateFromOriginalOptions {
  from: string;
  apply?: boolean;
  json?: boolean;
}

export interface MigrateFromOriginalDependencies {
  config: Config;
  openStore: (config: Config, log: Log) => Promise<Store>;
  log: Log;
  stdout: NodeJS.WritableStream;
  newId?: NewId;
}

/** The study's time: the manual clock's start when the study runs on one, else now. */
function studyNow(config: Config): Date {
  return config.scheduling.clock === 'manual' ? (config.scheduling.clockStart ?? new Date()) : new Date();
}

export async function runMigrateFromOriginal(
  options: MigrateFromOriginalOptions,
  dependencies: MigrateFromOriginalDependencies,
): Promise<{ outcome: MigrationOutcome | undefined }> {
  const { config, stdout } = dependencies;
  const tables = await readOriginalDatabase(options.from);
  const store = await dependencies.openStore(config, dependencies.log).catch((error: unknown) => {
    if (!isStateDirInUse(error)) throw error;
    throw new AppError(
      'conflict',
      `migrate-from-original writes to the state directory ${config.storage.stateDir}, which a running server ` +
        'holds: stop the server, import, then start it again',
    );
  });
  try {
    const now = studyNow(config);
    const plan = await planMigration(tables, store, {
      defaultCountry: config.conversation.defaultCountry,
      defaultLanguage: config.language.defaultLanguage,
      prepTimeMinutes: config.scheduling.prepTimeMinutes,
      now,
    });
    const summary = summarisePlan(plan);
    const outcome = options.apply
      ? await applyMigration(store, plan, {
          now,
          newId: dependencies.newId ?? randomId,
          prepTimeMinutes: config.scheduling.prepTimeMinutes,
        })
      : undefined;
    if (options.json) {
      stdout.write(
        `${JSON.stringify({ ...summary, applied: outcome !== undefined, outcome: outcome ?? null }, null, 2)}\n`,
      );
    } else {
      stdout.write(formatPlan(summary));
      stdout.write(
        outcome ? formatOutcome(outcome) : 'Dry run: nothing was written. Run again with --apply to import.\n',
      );
    }
    return { outcome };
  } finally {
    await store.close();
  }
}
