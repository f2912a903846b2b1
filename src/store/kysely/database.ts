/**
 * The table types both adapters query through Kysely. Column names are the stored (snake_case) names; the
 * repositories map rows to the domain types of `store.ts`.
 *
 * Timestamps and JSON are stored differently by dialect (ISO-8601 text and JSON text on SQLite, `timestamptz` and
 * `jsonb` on PostgreSQL), so their select types admit both shapes and `column-codecs.ts` reads either. Writes always
 * send text: PostgreSQL casts an ISO-8601 string to `timestamptz` and a JSON string to `jsonb` itself.
 */
import type { ColumnType, Generated } from 'kysely';
import type { JsonColumn, NullableJsonColumn, NullableTimestampColumn, TimestampColumn } from './column-types.ts';
import type { RatingsTable } from './rating-tables.ts';
import type {
  AlertDeliveriesTable,
  AlertsTable,
  ConversationTakeoversTable,
  SafetyReviewsTable,
} from './safety-tables.ts';
import type { StaffTables } from './staff-tables.ts';
import type { TrialTables } from './trial-tables.ts';

export interface ParticipantsTable {
  id: string;
  phone_number: string;
  name: string;
  gender: string;
  ethnicity: string;
  background: string;
  timezone: string;
  /** Added by migration 007; `en` for participants enrolled before it. */
  language: ColumnType<string, string | undefined, string>;
  channel: Generated<string>;
  status: string;
  enrolled_at: TimestampColumn;
  created_at: TimestampColumn;
  updated_at: TimestampColumn;
}

export interface FlowStatesTable {
  participant_id: string;
  flow_type: string;
  current_state: string;
  state_data: JsonColumn;
  created_at: TimestampColumn;
  updated_at: TimestampColumn;
}

/** One message of a participant's working history (migration 016). */
export interface ConversationMessagesTable {
  participant_id: string;
  seq: number;
  /** The message as JSON: `{"role","content","timestamp"}`. */
  message: string;
}

export interface TranscriptTable {
  id: Generated<number>;
  participant_id: string;
  role: string;
  kind: string;
  content: string;
  tool_calls: NullableJsonColumn;
  tool_call_id: string | null;
  tool_name: string | null;
  module: string | null;
  model: string | null;
  source_message_id: string | null;
  outbound_id: string | null;
  /** Migration 003. */
  llm_call_id: ColumnType<number | null, number | null | undefined, number | null>;
  created_at: TimestampColumn;
}

export interface EventsTable {
  id: Generated<number>;
  participant_id: string | null;
  type: string;
  data: JsonColumn;
  source_message_id: string | null;
  created_at: TimestampColumn;
}

export interface JobsTable {
  id: string;
  /** Insertion order: the tie-breaker between jobs due at the same instant. */
  enqueue_order: Generated<number>;
  kind: string;
  participant_id: string | null;
  run_at: TimestampColumn;
  payload: JsonColumn;
  status: string;
  attempts: number;
  max_attempts: number;
  last_error: string | null;
  lease_owner: string | null;
  lease_until: NullableTimestampColumn;
  dedup_key: string | null;
  /** A held job: the channel whose connection wakes it (migration 020); null otherwise. */
  wake_on: string | null;
  created_at: TimestampColumn;
  updated_at: TimestampColumn;
}

export interface InboundMessagesTable {
  id: string;
  channel: string;
  participant_id: string;
  provider_message_id: string | null;
  from_phone: string;
  text: string;
  poll_answer: NullableJsonColumn;
  status: string;
  received_at: TimestampColumn;
  processed_at: NullableTimestampColumn;
  last_error: string | null;
  /** Migration 005: the global arrival order (identity on PostgreSQL; on SQLite the largest rowid + 1). */
  arrival_order: Generated<number>;
}

/** Migration 018: a participant's model outage, one row while it lasts. */
export interface LlmOutagesTable {
  participant_id: string;
  started_at: TimestampColumn;
  source_message_id: string | null;
}

/** Migration 005: the shared manual clock (`PROMPTPIPE_CLOCK=manual` on PostgreSQL): one row, name `manual`. */
export interface StudyClockTable {
  name: string;
  now: TimestampColumn;
  updated_at: TimestampColumn;
}

export interface LlmCallsTable {
  id: Generated<number>;
  participant_id: string | null;
  purpose: string;
  model: string;
  provider_host: string;
  temperature: number | null;
  prompt_file: string | null;
  prompt_version: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  latency_ms: number;
  outcome: string;
  error: string | null;
  created_at: TimestampColumn;
}

export interface BroadcastsTable {
  id: string;
  text: string;
  filter: JsonColumn;
  recipients: number;
  created_at: TimestampColumn;
}

export interface WebChatTokensTable {
  token: string;
  participant_id: string;
  created_at: TimestampColumn;
  revoked_at: NullableTimestampColumn;
}

export interface WhatsAppAuthTable {
  session: string;
  category: string;
  key_id: string;
  value: string;
  updated_at: TimestampColumn;
}

export interface WhatsAppMessagesTable {
  provider_message_id: string;
  session: string;
  outbound_id: string;
  participant_id: string;
  remote_jid: string;
  kind: string;
  poll: NullableJsonColumn;
  created_at: TimestampColumn;
}

export interface Database extends StaffTables, TrialTables {
  participants: ParticipantsTable;
  flow_states: FlowStatesTable;
  conversation_messages: ConversationMessagesTable;
  transcript: TranscriptTable;
  events: EventsTable;
  jobs: JobsTable;
  inbound_messages: InboundMessagesTable;
  llm_calls: LlmCallsTable;
  llm_outages: LlmOutagesTable;
  broadcasts: BroadcastsTable;
  web_chat_tokens: WebChatTokensTable;
  whatsapp_auth: WhatsAppAuthTable;
  whatsapp_messages: WhatsAppMessagesTable;
  deliveries: DeliveriesTable;
  recorded_responses: RecordedResponsesTable;
  imported_receipts: ImportedReceiptsTable;
  study_clock: StudyClockTable;
  telegram_start_codes: TelegramStartCodesTable;
  telegram_chats: TelegramChatsTable;
  telegram_messages: TelegramMessagesTable;
  alerts: AlertsTable;
  alert_deliveries: AlertDeliveriesTable;
  safety_reviews: SafetyReviewsTable;
  conversation_takeovers: ConversationTakeoversTable;
  ratings: RatingsTable;
  participant_days: ParticipantDaysTable;
  participant_adherence: ParticipantAdherenceTable;
  participant_status_periods: ParticipantStatusPeriodsTable;
}

/** Migration 022: one row per participant and local study day with a daily prompt (study-day-projection.ts). */
export interface ParticipantDaysTable {
  participant_id: string;
  /** `YYYY-MM-DD` in the participant's zone. */
  local_date: string;
  prompt_sent_at: TimestampColumn;
  first_reply_at: NullableTimestampColumn;
  reply_seconds: number | null;
  /** 1 when the participant answered "Done" that day. */
  done: ColumnType<number, number | undefined, number>;
}

/** Migration 022: a participant's counts of study days, and the adherence grid's sort key. */
export interface ParticipantAdherenceTable {
  participant_id: string;
  prompts_sent: ColumnType<number, number | undefined, number>;
  prompts_answered: ColumnType<number, number | undefined, number>;
  prompts_done: ColumnType<number, number | undefined, number>;
  /** Done per thousand prompts sent; 1001 before the first prompt. */
  adherence_rank: ColumnType<number, number | undefined, number>;
}

/** Migration 022: a span of time/** Migration 022: a span of time a participant was not active (paused, withdrawn, completed). */
export interface ParticipantStatusPeriodsTable {
  participant_id: string;
  status: string;
  started_at: TimestampColumn;
  ended_at: NullableTimestampColumn;
}

export interface TelegramStartCodesTable {
  code_hash: string;
  participant_id: string;
  created_at: TimestampColumn;
  expires_at: TimestampColumn;
  used_at: NullableTimestampColumn;
}

export interface TelegramChatsTable {
  participant_id: string;
  chat_id: string;
  linked_at: TimestampColumn;
}

export interface TelegramMessagesTable {
  outbound_id: string;
  participant_id: string;
  chat_id: string;
  message_id: string;
  poll_id: string | null;
  poll: NullableJsonColumn;
  created_at: TimestampColumn;
}

export interface DeliveriesTable {
  id: Generated<number>;
  outbound_id: string;
  participant_id: string | null;
  channel: string;
  provider_message_id: string | null;
  status: string;
  error_code: string | null;
  error_message: string | null;
  created_at: TimestampColumn;
}

/** Migration 021: `POST /response` records and responses imported from an original PromptPipe database. */
export interface RecordedResponsesTable {
  id: Generated<number>;
  sender: string;
  body: string;
  participant_id: string | null;
  received_at: TimestampColumn;
  import_key: string | null;
}

/** Migration 021: receipts imported from an original PromptPipe database. */
export interface ImportedReceiptsTable {
  id: Generated<number>;
  recipient: string;
  status: string;
  sent_at: TimestampColumn;
  import_key: string;
}
