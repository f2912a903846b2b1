/** The tables of migration 030 (staff accounts and the audit trail), as Kysely sees them. */
import type { Generated } from 'kysely';
import type { NullableTimestampColumn, TimestampColumn } from './column-types.ts';

export interface StaffTables {
  staff_users: StaffUsersTable;
  staff_sessions: StaffSessionsTable;
  api_tokens: ApiTokensTable;
  audit_log: AuditLogTable;
}

export interface StaffUsersTable {
  id: string;
  email: string;
  display_name: string;
  role: string;
  can_identify: number;
  password_hash: string | null;
  invite_hash: string | null;
  invite_expires_at: NullableTimestampColumn;
  failed_sign_ins: number;
  locked_until: NullableTimestampColumn;
  created_at: TimestampColumn;
  deactivated_at: NullableTimestampColumn;
}

export interface StaffSessionsTable {
  id_hash: string;
  user_id: string | null;
  signed_in: number;
  csrf_token: string;
  created_at: TimestampColumn;
  last_used_at: TimestampColumn;
}

export interface ApiTokensTable {
  id: string;
  user_id: string;
  name: string;
  scope: string;
  secret_hash: string;
  created_at: TimestampColumn;
  expires_at: NullableTimestampColumn;
  revoked_at: NullableTimestampColumn;
  last_used_at: NullableTimestampColumn;
}

export interface AuditLogTable {
  id: Generated<number>;
  at: TimestampColumn;
  actor: string;
  actor_user_id: string | null;
  actor_token_id: string | null;
  action: string;
  participant_id: string | null;
  address: string | null;
  outcome: string;
  status: number | null;
  detail: string | null;
}
