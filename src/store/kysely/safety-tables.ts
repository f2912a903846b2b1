/** The safety net's tables (migration 050); see `store/safety-records.ts` for what they mean. */
import type { ColumnType } from 'kysely';
import type { NullableTimestampColumn, TimestampColumn } from './column-types.ts';

export interface AlertsTable {
  id: string;
  participant_id: string | null;
  kind: string;
  detector: string;
  rule: string | null;
  score: number | null;
  urgency: string;
  reason: string;
  source_message_id: string | null;
  status: string;
  created_at: TimestampColumn;
  acknowledged_at: NullableTimestampColumn;
  acknowledged_by: string | null;
  acknowledge_note: string | null;
  resolved_at: NullableTimestampColumn;
  resolved_by: string | null;
  resolve_note: string | null;
}

export interface AlertDeliveriesTable {
  alert_id: string;
  route: string;
  status: string;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  delivered_at: NullableTimestampColumn;
}

export interface SafetyReviewsTable {
  participant_id: string;
  alert_id: string;
  started_at: TimestampColumn;
  /** The inbound message whose coach turn is held until the review ends (migration 052). */
  held_message_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ConversationTakeoversTable {
  participant_id: string;
  taken_by: string;
  started_at: TimestampColumn;
  timers: string;
  last_staff_message_at: TimestampColumn;
}
