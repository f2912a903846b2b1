import type { Kysely } from 'kysely';
import type { SchemaDialect } from './schema-dialect.ts';

/**
 * Staff accounts (docs/api.md, "Staff accounts and permissions"):
 * - `staff_users`: e-mail (lower case, unique), role, a scrypt password hash (never the password), the failed sign-ins
 *   since the last success and the lockout they caused, and `deactivated_at` (users are never deleted: the audit trail
 *   names them). `invite_hash`: the SHA-256 of a pending one-time invitation link's secret.
 * - `staff_sessions`: dashboard sign-ins, keyed by the SHA-256 of the cookie's value, so a copy of the database opens
 *   no session. In the database so that they survive a restart, every instance sees a revocation at once, and
 *   "sign out everywhere" is one delete. `user_id` is empty for the first-admin sign-in with the API token and for an
 *   unprotected dashboard's session (which exists only to carry a CSRF token).
 * - `api_tokens`: personal tokens, `pp_<id>_<secret>`; only the secret's SHA-256 is stored.
 * - `audit_log`: append-only; no route updates or deletes a row.
 */
export async function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  await db.schema
    .createTable('staff_users')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('email', 'text', (column) => column.notNull().unique())
    .addColumn('display_name', 'text', (column) => column.notNull())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('can_identify', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('password_hash', 'text')
    .addColumn('invite_hash', 'text', (column) => column.unique())
    .addColumn('invite_expires_at', dialect.timestampType)
    .addColumn('failed_sign_ins', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('locked_until', dialect.timestampType)
    .addColumn('created_at', dialect.timestampType, (column) => column.notNull())
    .addColumn('deactivated_at', dialect.timestampType)
    .execute();

  await db.schema
    .createTable('staff_sessions')
    .addColumn('id_hash', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text')
    .addColumn('signed_in', 'integer', (column) => column.notNull())
    .addColumn('csrf_token', 'text', (column) => column.notNull())
    .addColumn('created_at', dialect.timestampType, (column) => column.notNull())
    .addColumn('last_used_at', dialect.timestampType, (column) => column.notNull())
    .execute();
  await db.schema.createIndex('staff_sessions_user_index').on('staff_sessions').column('user_id').execute();
  await db.schema.createIndex('staff_sessions_last_used_index').on('staff_sessions').column('last_used_at').execute();

  await db.schema
    .createTable('api_tokens')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('scope', 'text', (column) => column.notNull())
    .addColumn('secret_hash', 'text', (column) => column.notNull())
    .addColumn('created_at', dialect.timestampType, (column) => column.notNull())
    .addColumn('expires_at', dialect.timestampType)
    .addColumn('revoked_at', dialect.timestampType)
    .addColumn('last_used_at', dialect.timestampType)
    .execute();

  await dialect
    .addIdentityPrimaryKey(db.schema.createTable('audit_log'), 'id')
    .addColumn('at', dialect.timestampType, (column) => column.notNull())
    .addColumn('actor', 'text', (column) => column.notNull())
    .addColumn('actor_user_id', 'text')
    .addColumn('actor_token_id', 'text')
    .addColumn('action', 'text', (column) => column.notNull())
    .addColumn('participant_id', 'text')
    .addColumn('address', 'text')
    .addColumn('outcome', 'text', (column) => column.notNull())
    .addColumn('status', 'integer')
    .addColumn('detail', 'text')
    .execute();
  await db.schema.createIndex('audit_log_at_index').on('audit_log').column('at').execute();
  await db.schema
    .createIndex('audit_log_participant_index')
    .on('audit_log')
    .columns(['participant_id', 'at'])
    .execute();
}
