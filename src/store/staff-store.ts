/**
 * The storage port of staff accounts, their sessions and API tokens, and the audit trail (migration 030). Secrets
 * never reach it in clear: passwords arrive as scrypt hashes, session ids, token secrets and invitation secrets as
 * SHA-256 digests (src/staff/).
 */
import type { Role, TokenScope } from '../domain/permissions.ts';

export interface StaffUser {
  id: string;
  /** Lower case; unique. */
  email: string;
  displayName: string;
  role: Role;
  /** A researcher or viewer granted identifiable access (phone numbers and names in clear). */
  canIdentify: boolean;
  /** Undefined until an invited user has chosen a password. */
  passwordHash: string | undefined;
  inviteHash: string | undefined;
  inviteExpiresAt: Date | undefined;
  /** Wrong passwords since the last successful sign-in. */
  failedSignIns: number;
  lockedUntil: Date | undefined;
  createdAt: Date;
  deactivatedAt: Date | undefined;
}

export interface StaffSessionRecord {
  /** SHA-256 of the cookie's value. */
  idHash: string;
  /** Undefined for the first-admin sign-in with the API token and for an unprotected dashboard. */
  userId: string | undefined;
  signedIn: boolean;
  csrfToken: string;
  createdAt: Date;
  lastUsedAt: Date;
}

export interface ApiTokenRecord {
  /** The public part of `pp_<id>_<secret>`. */
  id: string;
  userId: string;
  name: string;
  scope: TokenScope;
  secretHash: string;
  createdAt: Date;
  expiresAt: Date | undefined;
  revokedAt: Date | undefined;
  lastUsedAt: Date | undefined;
}

export type StaffUserPatch = Partial<
  Pick<
    StaffUser,
    | 'displayName'
    | 'role'
    | 'canIdentify'
    | 'passwordHash'
    | 'inviteHash'
    | 'inviteExpiresAt'
    | 'failedSignIns'
    | 'lockedUntil'
    | 'deactivatedAt'
  >
>;

export interface StaffRepository {
  /** Throws `AppError('conflict')` when the e-mail is taken. */
  createUser(user: StaffUser): Promise<void>;
  getUser(id: string): Promise<StaffUser | undefined>;
  getUserByEmail(email: string): Promise<StaffUser | undefined>;
  getUserByInviteHash(inviteHash: string): Promise<StaffUser | undefined>;
  /** Oldest first. */
  listUsers(): Promise<StaffUser[]>;
  /** Active (not deactivated) admins: the first-admin path is open while there are none. */
  countActiveAdmins(): Promise<number>;
  /** Whether any account exists at all (then the dashboard demands a sign-in even without an API token). */
  anyUser(): Promise<boolean>;
  /** Returns false when the id is unknown. Patch fields set to undefined clear the column. */
  updateUser(id: string, patch: StaffUserPatch): Promise<boolean>;
  /** Counts a wrong password; returns the count after it (atomic, so two instances cannot lose one). */
  recordFailedSignIn(id: string): Promise<number>;

  createSession(session: StaffSessionRecord): Promise<void>;
  getSession(idHash: string): Promise<StaffSessionRecord | undefined>;
  touchSession(idHash: string, at: Date): Promise<void>;
  deleteSession(idHash: string): Promise<void>;
  /** Sign out everywhere, or a deactivated user's sessions. Returns how many ended. */
  deleteSessionsOfUser(userId: string): Promise<number>;
  /** Drops sessions unused since `before` (expired): keeps the table small. */
  deleteSessionsUnusedSince(before: Date): Promise<number>;

  createToken(token: ApiTokenRecord): Promise<void>;
  getToken(id: string): Promise<ApiTokenRecord | undefined>;
  /** Newest first; every user's when `userId` is undefined. */
  listTokens(userId?: string): Promise<ApiTokenRecord[]>;
  /** Returns false when unknown or already revoked. */
  revokeToken(id: string, at: Date): Promise<boolean>;
  touchToken(id: string, at: Date): Promise<void>;
}

export type AuditOutcome = 'success' | 'denied' | 'failure';

export interface AuditEntry {
  id: number;
  at: Date;
  /** Who: an e-mail, `token:<id> (<e-mail>)`, `PROMPTPIPE_API_TOKEN`, `anonymous`, or the e-mail typed at sign-in. */
  actor: string;
  actorUserId: string | undefined;
  actorTokenId: string | undefined;
  /** `POST /participants/:id/transition`, `sign-in`, `export`… */
  action: string;
  participantId: string | undefined;
  address: string | undefined;
  outcome: AuditOutcome;
  /** The HTTP status answered, when the action was a request. */
  status: number | undefined;
  /** A short description (never a secret, never a message body). */
  detail: string | undefined;
}

export interface AuditFilter {
  actor?: string;
  action?: string;
  participantId?: string;
  from?: Date;
  /** Exclusive. */
  to?: Date;
}

/** Append-only: there is no update and no delete. */
export interface AuditRepository {
  append(entry: Omit<AuditEntry, 'id'>): Promise<void>;
  /** Newest first, at most `limit`. */
  list(filter: AuditFilter, limit: number): Promise<AuditEntry[]>;
  /** Oldest first, after the id `after` (keyset pages for the export). */
  page(filter: AuditFilter, after: number | undefined, limit: number): Promise<AuditEntry[]>;
}
