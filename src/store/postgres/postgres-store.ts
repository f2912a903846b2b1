import { Kysely, sql } from 'kysely';
import pg from 'pg';
import { AppError } from '../../domain/errors.ts';
import type { Database } from '../kysely/database.ts';
import { createKyselyStore } from '../kysely/kysely-store.ts';
import { migrateToLatest } from '../migrations/migrate-to-latest.ts';
import type { Store } from '../store.ts';
import { createUnitOfWorkScope } from '../unit-of-work.ts';
import { withLockedFlowStateCache } from './locked-flow-state-cache.ts';
import { namedStatementPool } from './named-statements.ts';
import { postgresDialect } from './postgres-dialect.ts';
import { SchemaScopedPostgresDialect } from './schema-scoped-dialect.ts';
import { createWalFlush, GROUP_COMMIT_STARTUP_OPTION } from './wal-flush.ts';

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`. */
  connectionString: string;
  /**
   * The PostgreSQL schema holding PromptPipe's tables, created if missing and made the search path of every pooled
   * connection. Default: the server's search path (normally `public`). Tests pass a fresh one to isolate themselves.
   */
  schema?: string;
  /** Largest number of pooled connections. Default 10. */
  maxConnections?: number;
  /** Told about errors of idle pooled connections (a server restart); the pool replaces them. */
  onPoolError?: (error: Error) => void;
  /**
   * Group commit (default true): commits do not wait for the WAL flush, `Store.durable()` flushes once for every
   * waiting caller (wal-flush.ts). False: every commit waits for its flush (the server's `synchronous_commit`).
   */
  groupCommit?: boolean;
}

/** Letters, digits and underscores: the schema name goes into a startup parameter and DDL, so it is never quoted. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Connects, creates the schema if asked, and migrates a PostgreSQL database. */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const { schema } = options;
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new AppError('invalid_input', `PostgreSQL schema name "${schema}" must match ${SCHEMA_NAME}`);
  }
  const groupCommit = options.groupCommit ?? true;
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    // Startup parameters rather than a SET after connecting: they hold for every connection the pool ever opens, from
    // its first statement, with no window in which a query could run against another schema.
    ...startupOptions(options.connectionString, [
      ...(schema === undefined ? [] : [`-c search_path=${schema}`]),
      ...(groupCommit ? [GROUP_COMMIT_STARTUP_OPTION] : []),
    ]),
  });
  // Without a listener, an idle connection's error (the server restarting) would be thrown and end the process.
  pool.on('error', (error) => options.onPoolError?.(error));
  const unitOfWork = createUnitOfWorkScope();
  const db = new Kysely<Database>({
    dialect: unitOfWork.guard(new SchemaScopedPostgresDialect({ pool: namedStatementPool(pool) })),
  });
  try {
    if (schema !== undefined) await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
    // The migration tables are looked up in an explicit schema: unqualified, Kysely finds `kysely_migration` in ANY
    // schema of the database (another deployment's, a test's) and then fails to read it from the search path.
    const migrationSchema = schema ?? (await currentSchema(db));
    await migrateToLatest(
      db as Kysely<unknown>,
      postgresDialect.schema,
      migrationSchema === undefined ? {} : { schema: migrationSchema },
    );
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return unitOfWork.route(
    withLockedFlowStateCache(
      createKyselyStore({
        db,
        dialect: postgresDialect,
        ...(groupCommit ? { durable: createWalFlush(pool).durable } : {}),
      }),
    ),
  );
}

/**
 * The `options` startup parameter: the URL's own (`?options=…`), then ours, which win where both set one thing. Given
 * as a pool option, it replaces the URL's, so the URL's is carried over.
 */
function startupOptions(connectionString: string, ours: readonly string[]): { options?: string } {
  let fromUrl: string | null = null;
  try {
    fromUrl = new URL(connectionString).searchParams.get('options');
  } catch {
    // Not a URL: pg parses it itself, and an `options` in it gives way to ours.
  }
  const parts = [...(fromUrl ? [fromUrl] : []), ...ours];
  return parts.length === 0 ? {} : { options: parts.join(' ') };
}

/** The schema unqualified names resolve to (the first existing schema of the search path). */
async function currentSchema(db: Kysely<Database>): Promise<string | undefined> {
  const result = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  return result.rows[0]?.schema ?? undefined;
}
