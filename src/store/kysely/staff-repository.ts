import type { Kysely, Selectable, Updateable } from 'kysely';
import { AppError } from '../../domain/errors.ts';
import { isRole, isTokenScope } from '../../domain/permissions.ts';
import type { ApiTokenRecord, StaffRepository, StaffSessionRecord, StaffUser, StaffUserPatch } from '../staff-store.ts';
import { fromOptionalTimestamp, fromTimestamp, toOptionalTimestamp, toTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';
import type { ApiTokensTable, StaffSessionsTable, StaffUsersTable } from './staff-tables.ts';

export function createStaffRepository(db: Kysely<Database>): StaffRepository {
  return {
    async createUser(user) {
      // ON CONFLICT DO NOTHING rather than catching the violation: on PostgreSQL it would abort a surrounding transaction.
      const result = await db
        .insertInto('staff_users')
        .values({
          id: user.id,
          email: user.email,
          display_name: user.displayName,
          role: user.role,
          can_identify: user.canIdentify ? 1 : 0,
          password_hash: user.passwordHash ?? null,
          invite_hash: user.inviteHash ?? null,
          invite_expires_at: toOptionalTimestamp(user.inviteExpiresAt),
          failed_sign_ins: user.failedSignIns,
          locked_until: toOptionalTimestamp(user.lockedUntil),
          created_at: toTimestamp(user.createdAt),
          deactivated_at: toOptionalTimestamp(user.deactivatedAt),
        })
        .onConflict((conflict) => conflict.doNothing())
        .executeTakeFirst();
      if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) {
        throw new AppError('conflict', `a staff account with the e-mail ${user.email} exists`);
      }
    },
    async getUser(id) {
      const row = await db.selectFrom('staff_users').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toUser(row);
    },
    async getUserByEmail(email) {
      const row = await db.selectFrom('staff_users').selectAll().where('email', '=', email).executeTakeFirst();
      return row && toUser(row);
    },
    async getUserByInviteHash(inviteHash) {
      const row = await db
        .selectFrom('staff_users')
        .selectAll()
        .where('invite_hash', '=', inviteHash)
        .executeTakeFirst();
      return row && toUser(row);
    },
    async listUsers() {
      const rows = await db.selectFrom('staff_users').selectAll().orderBy('created_at').orderBy('id').execute();
      return rows.map(toUser);
    },
    async countActiveAdmins() {
      const row = await db
        .selectFrom('staff_users')
        .select((builder) => builder.fn.countAll<number | string>().as('count'))
        .where('role', '=', 'admin')
        .where('deactivated_at', 'is', null)
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },
    async anyUser() {
      const row = await db.selectFrom('staff_users').select('id').limit(1).executeTakeFirst();
      return row !== undefined;
    },
    async updateUser(id, patch) {
      const values = userColumns(patch);
      if (Object.keys(values).length === 0) return (await this.getUser(id)) !== undefined;
      const result = await db.updateTable('staff_users').set(values).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    async recordFailedSignIn(id) {
      await db
        .updateTable('staff_users')
        .set((builder) => ({ failed_sign_ins: builder('failed_sign_ins', '+', 1) }))
        .where('id', '=', id)
        .execute();
      const row = await db.selectFrom('staff_users').select('failed_sign_ins').where('id', '=', id).executeTakeFirst();
      return row?.failed_sign_ins ?? 0;
    },

    async createSession(session) {
      await db
        .insertInto('staff_sessions')
        .values({
          id_hash: session.idHash,
          user_id: session.userId ?? null,
          signed_in: session.signedIn ? 1 : 0,
          csrf_token: session.csrfToken,
          created_at: toTimestamp(session.createdAt),
          last_used_at: toTimestamp(session.lastUsedAt),
        })
        .execute();
    },
    async getSession(idHash) {
      const row = await db.selectFrom('staff_sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
      return row && toSession(row);
    },
    async touchSession(idHash, at) {
      await db
        .updateTable('staff_sessions')
        .set({ last_used_at: toTimestamp(at) })
        .where('id_hash', '=', idHash)
        .execute();
    },
    async deleteSession(idHash) {
      await db.deleteFrom('staff_sessions').where('id_hash', '=', idHash).execute();
    },
    async deleteSessionsOfUser(userId) {
      const result = await db.deleteFrom('staff_sessions').where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async deleteSessionsUnusedSince(before) {
      const result = await db
        .deleteFrom('staff_sessions')
        .where('last_used_at', '<', toTimestamp(before))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async createToken(token) {
      await db
        .insertInto('api_tokens')
        .values({
          id: token.id,
          user_id: token.userId,
          name: token.name,
          scope: token.scope,
          secret_hash: token.secretHash,
          created_at: toTimestamp(token.createdAt),
          expires_at: toOptionalTimestamp(token.expiresAt),
          revoked_at: toOptionalTimestamp(token.revokedAt),
          last_used_at: toOptionalTimestamp(token.lastUsedAt),
        })
        .execute();
    },
    async getToken(id) {
      const row = await db.selectFrom('api_tokens').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toToken(row);
    },
    async listTokens(userId) {
      let query = db.selectFrom('api_tokens').selectAll();
      if (userId !== undefined) query = query.where('user_id', '=', userId);
      const rows = await query.orderBy('created_at', 'desc').orderBy('id').execute();
      return rows.map(toToken);
    },
    async revokeToken(id, at) {
      const result = await db
        .updateTable('api_tokens')
        .set({ revoked_at: toTimestamp(at) })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    async touchToken(id, at) {
      await db
        .updateTable('api_tokens')
        .set({ last_used_at: toTimestamp(at) })
        .where('id', '=', id)
        .execute();
    },
  };
}

function userColumns(patch: StaffUserPatch): Updateable<StaffUsersTable> {
  const has = (key: keyof StaffUserPatch): boolean => Object.hasOwn(patch, key);
  return {
    ...(has('displayName') ? { display_name: patch.displayName } : {}),
    ...(has('role') ? { role: patch.role } : {}),
    ...(has('canIdentify') ? { can_identify: patch.canIdentify ? 1 : 0 } : {}),
    ...(has('passwordHash') ? { password_hash: patch.passwordHash ?? null } : {}),
    ...(has('inviteHash') ? { invite_hash: patch.inviteHash ?? null } : {}),
    ...(has('inviteExpiresAt') ? { invite_expires_at: toOptionalTimestamp(patch.inviteExpiresAt) } : {}),
    ...(has('failedSignIns') ? { failed_sign_ins: patch.failedSignIns } : {}),
    ...(has('lockedUntil') ? { locked_until: toOptionalTimestamp(patch.lockedUntil) } : {}),
    ...(has('deactivatedAt') ? { deactivated_at: toOptionalTimestamp(patch.deactivatedAt) } : {}),
  };
}

function toUser(row: Selectable<StaffUsersTable>): StaffUser {
  if (!isRole(row.role)) throw new AppError('internal', `staff user ${row.id} has an unknown role ${row.role}`);
  return {
    id: row.id,
    email: row.email,
    displayName: row.display_name,
    role: row.role,
    canIdentify: Number(row.can_identify) === 1,
    passwordHash: row.password_hash ?? undefined,
    inviteHash: row.invite_hash ?? undefined,
    inviteExpiresAt: fromOptionalTimestamp(row.invite_expires_at),
    failedSignIns: Number(row.failed_sign_ins),
    lockedUntil: fromOptionalTimestamp(row.locked_until),
    createdAt: fromTimestamp(row.created_at),
    deactivatedAt: fromOptionalTimestamp(row.deactivated_at),
  };
}

function toSession(row: Selectable<StaffSessionsTable>): StaffSessionRecord {
  return {
    idHash: row.id_hash,
    userId: row.user_id ?? undefined,
    signedIn: Number(row.signed_in) === 1,
    csrfToken: row.csrf_token,
    createdAt: fromTimestamp(row.created_at),
    lastUsedAt: fromTimestamp(row.last_used_at),
  };
}

function toToken(row: Selectable<ApiTokensTable>): ApiTokenRecord {
  if (!isTokenScope(row.scope)) throw new AppError('internal', `API token ${row.id} has an unknown scope ${row.scope}`);
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    scope: row.scope,
    secretHash: row.secret_hash,
    createdAt: fromTimestamp(row.created_at),
    expiresAt: fromOptionalTimestamp(row.expires_at),
    revokedAt: fromOptionalTimestamp(row.revoked_at),
    lastUsedAt: fromOptionalTimestamp(row.last_used_at),
  };
}
