/**
 * Staff accounts: creating the first admin (CLI or dashboard), invitations, sign-in with lockout, roles,
 * deactivation, and personal API tokens. Secrets are returned once, to be shown once, and stored only as digests.
 *
 * Lockout: `LOCKOUT.maxFailures` wrong passwords in a row lock the account for `LOCKOUT.lockMs`; during it even the
 * right password is refused (or the lock would still answer guesses). A success resets the count. The per-address
 * throttle (auth-throttle.ts) additionally slows one address guessing many accounts.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '../domain/errors.ts';
import { isRole, isTokenScope, type Role, type TokenScope } from '../domain/permissions.ts';
import type { ApiTokenRecord, StaffRepository, StaffUser } from '../store/staff-store.ts';
import { checkPasswordStrength, decoyHash, hashPassword, verifyPassword } from './passwords.ts';
import { digest, formatApiToken, newSecret, newTokenId } from './secrets.ts';

export const LOCKOUT = { maxFailures: 5, lockMs: 15 * 60_000 } as const;
/** How long an invitation link stays usable. */
export const INVITE_LIFETIME_MS = 7 * 24 * 3_600_000;

export type SignInResult =
  | { ok: true; user: StaffUser }
  | { ok: false; reason: 'wrong' | 'locked' | 'deactivated'; user: StaffUser | undefined; lockedUntil?: Date };

export function normaliseEmail(email: string): string {
  const trimmed = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(trimmed) || trimmed.length > 254) {
    throw new AppError('invalid_input', `"${email}" is not an e-mail address`);
  }
  return trimmed;
}

function checkedRole(role: string): Role {
  if (!isRole(role)) throw new AppError('invalid_input', `role must be admin, coordinator, researcher or viewer`);
  return role;
}

function checkedName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > 200) throw new AppError('invalid_input', 'a display name of 1 to 200 characters');
  return trimmed;
}

export type StaffService = ReturnType<typeof createStaffService>;

export function createStaffService(options: { staff: StaffRepository; now: () => Date }) {
  const { staff, now } = options;

  function blankUser(email: string, displayName: string, role: string): StaffUser {
    return {
      id: `staff_${randomUUID()}`,
      email: normaliseEmail(email),
      displayName: checkedName(displayName),
      role: checkedRole(role),
      canIdentify: false,
      passwordHash: undefined,
      inviteHash: undefined,
      inviteExpiresAt: undefined,
      failedSignIns: 0,
      lockedUntil: undefined,
      createdAt: now(),
      deactivatedAt: undefined,
    };
  }

  async function requireUser(id: string): Promise<StaffUser> {
    const user = await staff.getUser(id);
    if (!user) throw new AppError('not_found', `no staff account ${id}`);
    return user;
  }

  return {
    /** An account with a password at once (the CLI's `staff create`, the dashboard's first admin). */
    async createWithPassword(input: { email: string; displayName: string; role: string; password: string }) {
      const user = blankUser(input.email, input.displayName, input.role);
      checkPasswordStrength(input.password, { email: user.email });
      user.passwordHash = await hashPassword(input.password);
      await staff.createUser(user);
      return user;
    },

    /** An account that signs in once it opens the link: returns the link's secret (shown once). */
    async invite(input: { email: string; displayName: string; role: string }) {
      const user = blankUser(input.email, input.displayName, input.role);
      const secret = newSecret();
      user.inviteHash = digest(secret);
      user.inviteExpiresAt = new Date(now().getTime() + INVITE_LIFETIME_MS);
      await staff.createUser(user);
      return { user, secret };
    },

    /** The invited account whose link this is, while it is usable. */
    async invitation(secret: string): Promise<StaffUser | undefined> {
      const user = await staff.getUserByInviteHash(digest(secret));
      if (!user || user.deactivatedAt || !user.inviteExpiresAt || user.inviteExpiresAt <= now()) return undefined;
      return user;
    },

    async acceptInvitation(secret: string, password: string): Promise<StaffUser> {
      const user = await this.invitation(secret);
      if (!user)
        throw new AppError('not_found', 'this invitation link is not valid any more: ask an admin for a new one');
      checkPasswordStrength(password, { email: user.email });
      const passwordHash = await hashPassword(password);
      await staff.updateUser(user.id, { passwordHash, inviteHash: undefined, inviteExpiresAt: undefined });
      return { ...user, passwordHash, inviteHash: undefined, inviteExpiresAt: undefined };
    },

    async signIn(email: string, password: string): Promise<SignInResult> {
      let user: StaffUser | undefined;
      try {
        user = await staff.getUserByEmail(normaliseEmail(email));
      } catch {
        user = undefined;
      }
      if (!user?.passwordHash) {
        // As slow as a real check, so the answer's timing does not say which e-mails have accounts.
        await verifyPassword(password, await decoyHash());
        return { ok: false, reason: 'wrong', user };
      }
      const at = now();
      if (user.lockedUntil && user.lockedUntil > at) {
        return { ok: false, reason: 'locked', user, lockedUntil: user.lockedUntil };
      }
      const matches = await verifyPassword(password, user.passwordHash);
      if (!matches) {
        const failures = await staff.recordFailedSignIn(user.id);
        if (failures >= LOCKOUT.maxFailures) {
          const lockedUntil = new Date(at.getTime() + LOCKOUT.lockMs);
          await staff.updateUser(user.id, { lockedUntil, failedSignIns: 0 });
          return { ok: false, reason: 'locked', user, lockedUntil };
        }
        return { ok: false, reason: 'wrong', user };
      }
      if (user.deactivatedAt) return { ok: false, reason: 'deactivated', user };
      if (user.failedSignIns > 0 || user.lockedUntil) {
        await staff.updateUser(user.id, { failedSignIns: 0, lockedUntil: undefined });
      }
      return { ok: true, user };
    },

    async changeRole(id: string, role: string, canIdentify: boolean): Promise<StaffUser> {
      const user = await requireUser(id);
      const next = checkedRole(role);
      if (user.role === 'admin' && next !== 'admin' && !user.deactivatedAt) await keepOneAdmin();
      await staff.updateUser(id, { role: next, canIdentify });
      return { ...user, role: next, canIdentify };
    },

    /** Deactivates the account and ends its sessions at once; its tokens stop working with it. */
    async deactivate(id: string): Promise<StaffUser> {
      const user = await requireUser(id);
      if (user.deactivatedAt) return user;
      if (user.role === 'admin') await keepOneAdmin();
      const deactivatedAt = now();
      await staff.updateUser(id, { deactivatedAt, inviteHash: undefined, inviteExpiresAt: undefined });
      await staff.deleteSessionsOfUser(id);
      return { ...user, deactivatedAt };
    },

    async createToken(input: { userId: string; name: string; scope: string; expiresAt?: Date | undefined }) {
      if (!isTokenScope(input.scope)) throw new AppError('invalid_input', 'scope must be read, write, export or admin');
      const name = input.name.trim();
      if (!name || name.length > 100) throw new AppError('invalid_input', 'name the token (1 to 100 characters)');
      if (input.expiresAt && input.expiresAt <= now()) throw new AppError('invalid_input', 'the expiry must be ahead');
      const secret = newSecret();
      const record: ApiTokenRecord = {
        id: newTokenId(),
        userId: input.userId,
        name,
        scope: input.scope as TokenScope,
        secretHash: digest(secret),
        createdAt: now(),
        expiresAt: input.expiresAt,
        revokedAt: undefined,
        lastUsedAt: undefined,
      };
      await staff.createToken(record);
      return { record, token: formatApiToken(record.id, secret) };
    },

    /** `byUserId` may revoke only its own tokens unless `asAdmin`. */
    async revokeToken(id: string, by: { userId: string | undefined; asAdmin: boolean }): Promise<ApiTokenRecord> {
      const token = await staff.getToken(id);
      if (!token || (!by.asAdmin && token.userId !== by.userId)) throw new AppError('not_found', `no token ${id}`);
      await staff.revokeToken(id, now());
      return token;
    },
  };

  async function keepOneAdmin(): Promise<void> {
    if ((await staff.countActiveAdmins()) <= 1) {
      throw new AppError('conflict', 'this is the last active admin: make someone else admin first');
    }
  }
}
