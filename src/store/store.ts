/**
 * The storage port. Everything the engine, the scheduler and the server persist goes through it.
 *
 * Glossary:
 * - repository: one table's operations, e.g. `jobs`. The same repositories are offered inside a transaction.
 * - transaction (unit of work): `store.transaction(fn)` runs `fn` in one database transaction, and every call on the
 *   store made while `fn` runs, in its asynchronous flow, joins it (`unit-of-work.ts`); so does a nested call. Never
 *   hold a transaction across an LLM call or a channel send: on SQLite it blocks every other writer.
 * - transcript: the append-only, never-trimmed record of every message of a participant (study data).
 * - event: an audit record (`tool-called`, `state-changed`, `job-failed`, …).
 * - job: a durable timed task (reminder, daily prompt, outbound delivery…), claimed with a lease.
 *
 * Adapters: `sqlite/` (better-sqlite3) and `postgres/` (pg), both on Kysely. Every adapter passes
 * `test/store/store-contract.ts`.
 */
import type { FlowState } from '../domain/flow-state.ts';
import type { Participant, ParticipantStatus } from '../domain/participant.ts';
import type { AllocationRepository } from './allocations.ts';
import type { RosterRepository, StudyDayRepository } from './dashboard-reads.ts';
import type { DecisionRepository } from './decisions.ts';
import type { OriginalRecordRepository } from './original-records.ts';
import type { RatingRepository } from './ratings-records.ts';
import type { AlertRepository, TakeoverRepository } from './safety-records.ts';
import type { AuditRepository, StaffRepository } from './staff-store.ts';

export type {
  AdherencePage,
  AdherenceQuery,
  AdherenceRow,
  ParticipantCounts,
  RosterFilter,
  RosterPage,
  RosterRepository,
  RosterRow,
  StudyDayFigures,
  StudyDayRepository,
  UsageFigures,
} from './dashboard-reads.ts';

export interface StoreRepositories {
  readonly participants: ParticipantRepository;
  readonly flowStates: FlowStateRepository;
  /** The working history, one row per message (not the transcript: that one is never trimmed). */
  readonly history: ConversationHistoryRepository;
  readonly transcript: TranscriptRepository;
  readonly events: EventRepository;
  readonly jobs: JobRepository;
  readonly inbound: InboundMessageRepository;
  /** Provenance of every LLM call (research data). */
  readonly llmCalls: LlmCallRepository;
  /** Model outages in progress, one per participant (the inbound pipeline's "one notice per outage"). */
  readonly llmOutages: LlmOutageRepository;
  readonly broadcasts: BroadcastRepository;
  /** Keyset-paged reads of whole tables for exports and statistics (research data). */
  readonly research: ResearchReadRepository;
  readonly whatsappAuth: WhatsAppAuthRepository;
  readonly whatsappMessages: WhatsAppMessageRepository;
  readonly deliveries: DeliveryRepository;
  readonly webChatTokens: WebChatTokenRepository;
  /** The dashboard's roster, overview and adherence grid (`dashboard-reads.ts`). */
  readonly roster: RosterRepository;
  readonly studyDays: StudyDayRepository;
  /** The original PromptPipe's receipts, responses and response figures (`original-records.ts`). */
  readonly originalRecords: OriginalRecordRepository;
  /** A randomised trial's allocations and block states (`allocations.ts`). */
  readonly allocations: AllocationRepository;
  /** Micro-randomised decisions, one per decision point moment (`decisions.ts`). */
  readonly decisions: DecisionRepository;
  readonly telegram: TelegramRepository;
  /** Staff accounts, their sessions and API tokens (`staff-store.ts`). */
  readonly staff: StaffRepository;
  /** The audit trail of what staff did: append-only. */
  readonly audit: AuditRepository;
  /** Staff alerts, their deliveries, participants under staff review (`safety-records.ts`). */
  readonly alerts: AlertRepository;
  /** Conversations taken over by staff (`safety-records.ts`). */
  readonly takeovers: TakeoverRepository;
  /** Human ratings of conversations with a rubric (`ratings-records.ts`). */
  readonly ratings: RatingRepository;
}

export interface Store extends StoreRepositories {
  readonly dialect: 'sqlite' | 'postgres';
  /**
   * Runs `fn` in one transaction: all of its writes commit together or none do. Calls on this store made inside `fn`
   * (in its asynchronous flow) join it, nested `transaction` calls too. `tx` is a `Store` bound to the transaction.
   */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
  /**
   * Runs `callback` once what was written so far is committed: at once outside a transaction; inside one, after the
   * outermost transaction commits, and never if it rolls back. For telling others about a commit (waking the job
   * runner for a job just enqueued), which must not happen before they can see it.
   */
  afterCommit(callback: () => void): void;
  /** Resolves when the database answers; rejects otherwise (health checks). */
  ping(): Promise<void>;
  /**
   * Resolves when every commit made before the call would survive a power loss. Called before anything outside may
   * learn of a commit: an HTTP response, a message handed to a channel. Immediate where every commit already is
   * durable (PostgreSQL; SQLite at `full`); on SQLite's default group commit one fsync serves every waiting caller.
   */
  durable(): Promise<void>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------------
// Participants

export interface ParticipantRepository {
  /** Throws `AppError('conflict')` when the phone number (or id) is already enrolled. */
  create(participant: Participant): Promise<void>;
  get(id: string): Promise<Participant | undefined>;
  getByPhone(phoneNumber: string): Promise<Participant | undefined>;
  /** Ordered by enrolment time, oldest first. */
  list(filter?: { status?: ParticipantStatus }): Promise<Participant[]>;
  /** Returns the updated participant, or undefined when the id is unknown. */
  update(
    id: string,
    patch: Partial<
      Pick<Participant, 'name' | 'gender' | 'ethnicity' | 'background' | 'timezone' | 'status' | 'channel'> & {
        language: string;
      }
    > & {
      updatedAt: Date;
    },
  ): Promise<Participant | undefined>;
  /** Returns false when the id is unknown. */
  delete(id: string): Promise<boolean>;
  count(filter?: { status?: ParticipantStatus }): Promise<number>;
  /** How many participants who are not withdrawn are on each channel (`''`: enrolled before channels were). */
  countByChannel(): Promise<Map<string, number>>;
}

// ---------------------------------------------------------------------------------------------------------------
// Flow state

export interface FlowStateRepository {
  get(participantId: string): Promise<FlowState | undefined>;
  /** Inserts or replaces the whole record. */
  save(state: FlowState): Promise<void>;
  delete(participantId: string): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------------
// Working history (`conversationHistory`)

/** One stored message of a participant's working history: its number and its JSON text. */
export interface StoredHistoryMessage {
  seq: number;
  message: string;
}

/**
 * A participant's working history, numbered from 1 in the order messages were appended. Rows are never changed, only
 * appended and deleted (oldest first, or all with the participant), so the newest row's number and text tell whether
 * a copy read earlier is still what is stored.
 */
export interface ConversationHistoryRepository {
  /** The newest `limit` messages, oldest first. */
  latest(participantId: string, limit: number): Promise<StoredHistoryMessage[]>;
  /** The newest message, or undefined when there is none. */
  newest(participantId: string): Promise<StoredHistoryMessage | undefined>;
  /**
   * Stores `messages` (JSON texts) numbered `firstSeq`, `firstSeq + 1`, …; rejects, storing none of them, when one of
   * those numbers is already taken.
   */
  append(participantId: string, firstSeq: number, messages: readonly string[]): Promise<void>;
  /** Deletes the messages numbered below `seq`; returns how many. */
  deleteBefore(participantId: string, seq: number): Promise<number>;
}

// ---------------------------------------------------------------------------------------------------------------
// Transcript (append-only)

export type TranscriptRole = 'user' | 'assistant' | 'tool' | 'system';

/**
 * What kind of entry: a participant's message, an assistant reply, a tool call or result, a proactive
 * system-generated message (habit prompt, reminder, poll, greeting), an organiser's message, a debug message.
 */
export type TranscriptKind =
  | 'message'
  | 'reply'
  | 'tool_call'
  | 'tool_result'
  | 'proactive'
  | 'poll'
  | 'organiser'
  | 'debug'
  | 'notice';

export interface TranscriptToolCall {
  id: string;
  name: string;
  /** Raw JSON text exactly as the model produced it. */
  arguments: string;
}

export interface NewTranscriptEntry {
  participantId: string;
  role: TranscriptRole;
  kind: TranscriptKind;
  content: string;
  toolCalls?: TranscriptToolCall[];
  toolCallId?: string;
  toolName?: string;
  /** INTAKE / FEEDBACK / scheduler / api … */
  module?: string;
  model?: string;
  /** The inbound message (transcript id of the participant's message, or inbound id) that caused this entry. */
  sourceMessageId?: string;
  /** Outbound delivery id when this entry was sent to the participant. */
  outboundId?: string;
  /** The `llm_calls` row that produced this entry (assistant replies and tool calls). */
  llmCallId?: number;
  createdAt: Date;
}

export interface TranscriptEntry extends NewTranscriptEntry {
  /** Monotonically increasing; the paging cursor. */
  id: number;
}

export interface TranscriptRepository {
  /** Appends in order and returns the stored entries with their ids. */
  append(entries: NewTranscriptEntry[]): Promise<TranscriptEntry[]>;
  /** Oldest first. `before` is an entry id (exclusive); with `limit`, returns the newest `limit` entries before it. */
  list(participantId: string, options?: { limit?: number; before?: number }): Promise<TranscriptEntry[]>;
  /**
   * The participant's message as recorded (role `user`) and the replies (kind `reply`) linked to one inbound message
   * (`sourceMessageId`): what tells an interrupted turn from a new one. Tool calls and results are not included.
   * Oldest first; an indexed look-up, however long the transcript.
   */
  forSourceMessage(participantId: string, sourceMessageId: string): Promise<TranscriptEntry[]>;
  /**
   * What was recorded since the participant last wrote: the entries after their latest message (role `user`), oldest
   * first, at most the newest `limit` of them (every entry, up to `limit`, when they have not written yet). What an
   * inbound message is matched against (open polls); a few rows, where `list` with a limit would decode them all.
   */
  afterLastMessage(participantId: string, options: { limit: number }): Promise<TranscriptEntry[]>;
  /** Only for `DELETE …?purge=true`. */
  purge(participantId: string): Promise<number>;
}

// ---------------------------------------------------------------------------------------------------------------
// Events (audit log)

export interface NewEvent {
  participantId?: string;
  /** noun-verb: `tool-called`, `state-changed`, `job-failed`, `prompt-skipped`, … */
  type: string;
  data: Record<string, unknown>;
  sourceMessageId?: string;
  createdAt: Date;
}

export interface StoredEvent extends NewEvent {
  id: number;
}

export interface EventRepository {
  record(event: NewEvent): Promise<void>;
  /** Oldest first. */
  list(filter?: { participantId?: string; type?: string; limit?: number }): Promise<StoredEvent[]>;
}

// ---------------------------------------------------------------------------------------------------------------
// Durable jobs

export const JobStatus = {
  PENDING: 'pending',
  RUNNING: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
} as const;
export type JobStatus = (typeof JobStatus)[keyof typeof JobStatus];

export interface NewJob {
  id: string;
  kind: string;
  participantId?: string;
  runAt: Date;
  payload: Record<string, unknown>;
  maxAttempts?: number;
  /** Unique among pending jobs: enqueuing with a key replaces (cancels) the pending job holding it. */
  dedupKey?: string;
}

export interface Job {
  id: string;
  kind: string;
  participantId: string | undefined;
  runAt: Date;
  payload: Record<string, unknown>;
  status: JobStatus;
  attempts: number;
  maxAttempts: number;
  lastError: string | undefined;
  leaseOwner: string | undefined;
  leaseUntil: Date | undefined;
  dedupKey: string | undefined;
  createdAt: Date;
  updatedAt: Date;
}

/** A lease to create a job under, already claimed (see {@link JobRepository.enqueue}). */
export interface JobClaim {
  owner: string;
  leaseMs: number;
}

export interface JobRepository {
  /**
   * Enqueue-or-replace: a pending job with the same dedup key is cancelled in the same statement group.
   *
   * With `claimFor`, the job is created already claimed (running under that lease, its first attempt counted) when a
   * claim would take it now: it is due, has no dedup key, and no earlier job of its kind and participant is due or
   * running under a valid lease (the order `claimDue` keeps for `orderedKinds`). Otherwise it is queued as usual; the
   * returned status says which. Only for a runner that is the only claimer (SQLite: one process): two instances
   * enqueuing for one participant at once could both find no earlier job.
   */
  enqueue(job: NewJob, now: Date, options?: { claimFor?: JobClaim }): Promise<Job>;
  get(id: string): Promise<Job | undefined>;
  /** Cancels the pending job holding this key; returns how many were cancelled (0 or 1). */
  cancelByKey(dedupKey: string, now: Date): Promise<number>;
  cancelById(id: string, now: Date): Promise<boolean>;
  /** Cancels every pending job of a participant (pause, withdraw, delete). */
  cancelForParticipant(participantId: string, now: Date): Promise<number>;
  /**
   * Claims up to `limit` jobs that are due (pending with run_at <= now) or whose lease expired (running with
   * lease_until < now), oldest run_at first: marks them running, sets the lease and increments attempts.
   * On PostgreSQL this uses `FOR UPDATE SKIP LOCKED` so several instances never claim the same job.
   */
  claimDue(options: {
    now: Date;
    owner: string;
    leaseMs: number;
    limit: number;
    kinds?: string[];
    /**
     * Kinds run one at a time per participant, in enqueue order, across every claimer (deliveries: a prompt reaches
     * the gateway before its poll whichever instance claims which). A job of these kinds is not claimed while an
     * earlier one of the same kind and participant is due or running under a valid lease.
     */
    orderedKinds?: string[];
  }): Promise<Job[]>;
  /**
   * Extends the leases of jobs this owner is still running (a heartbeat), so a long run is never taken over by
   * another instance while its owner is alive. Jobs no longer running under `owner` are left alone. Returns how many.
   */
  renewLeases(options: { ids: string[]; owner: string; leaseUntil: Date; now: Date }): Promise<number>;
  complete(id: string, now: Date): Promise<void>;
  /**
   * Makes every running job claimable again (pending, lease cleared; attempts kept) and returns how many. Start-up
   * recovery after a crash, ONLY where this process is the single runner (SQLite): a killed process's leases would
   * otherwise hold its jobs (a reply's delivery) until they expire. The interrupted run does not count as an attempt
   * (the process died, not the job), so restarts in a row never exhaust a job's attempts.
   */
  releaseLeases(now: Date): Promise<number>;
  /** With `retryAt`: back to pending at that time. Without: `failed`, keeping the error. */
  fail(id: string, error: string, now: Date, retryAt?: Date): Promise<void>;
  /**
   * Holds a running job: back to pending at `until`, the SAME row, its claim not counted as an attempt (the job did
   * not fail, its channel was not there). With `wakeOn` (a channel's name), {@link wakeHeld} brings it forward when
   * that channel connects. A job that is no longer running is left alone.
   */
  hold(id: string, options: { until: Date; now: Date; wakeOn?: string }): Promise<void>;
  /** Makes every job held for `wakeOn` due now; returns how many. */
  wakeHeld(wakeOn: string, now: Date): Promise<number>;
  /** The earliest instant at which something becomes claimable (a pending run_at or a running lease expiry). */
  nextDueAt(): Promise<Date | undefined>;
  /** Pending (and running) jobs, by run_at. */
  listPending(filter?: { participantId?: string; kind?: string }): Promise<Job[]>;
  getPendingByKey(dedupKey: string): Promise<Job | undefined>;
}

// ---------------------------------------------------------------------------------------------------------------
// Inbound messages (durable, deduplicated by provider id)

export interface NewInboundMessage {
  id: string;
  channel: string;
  participantId: string;
  providerMessageId?: string;
  from: string;
  text: string;
  /** JSON-serialisable structured poll answer, if any. */
  pollAnswer?: { pollId?: string; question?: string; option: string };
  receivedAt: Date;
}

export interface InboundMessage extends NewInboundMessage {
  status: 'received' | 'processed' | 'failed';
  processedAt: Date | undefined;
  lastError: string | undefined;
}

export interface InboundMessageRepository {
  /** Records the message; a repeated (channel, providerMessageId) is not stored again and returns `duplicate: true`. */
  record(message: NewInboundMessage): Promise<{ message: InboundMessage; duplicate: boolean }>;
  get(id: string): Promise<InboundMessage | undefined>;
  markProcessed(id: string, now: Date): Promise<void>;
  markFailed(id: string, error: string, now: Date): Promise<void>;
  /** Received but not yet processed, oldest first (then in arrival order); only `participantId`'s when given. */
  listUnprocessed(participantId?: string): Promise<InboundMessage[]>;
  /**
   * The participant's first message (in arrival order, across every instance) still `received`: the next one to
   * process. Called under the participant's lock, so two instances never process one participant's messages at once.
   */
  nextUnprocessed(participantId: string): Promise<InboundMessage | undefined>;
  /**
   * Holds the participant's messages still `received` for a model outage: each one not yet held gets `reason` as its
   * `lastError` (what keeps it pending; cleared when it is processed). Returns how many it held now, so a message
   * retried many times is counted as held once, whichever instance holds it.
   */
  hold(participantId: string, reason: string): Promise<number>;
  /** The participants with messages still `received`, the longest waiting first (recovery after a crash). */
  listParticipantsWithUnprocessed(): Promise<string[]>;
  /** When the participant's latest message on `channel` was received (the WhatsApp Cloud 24-hour window). */
  lastReceivedAt(participantId: string, channel: string): Promise<Date | undefined>;
}

// ---------------------------------------------------------------------------------------------------------------
// The whatsapp-web channel: linked-device credentials and Signal keys, and the messages it sent

/** One stored value of a linked device's auth state; `value: null` deletes it. */
export interface WhatsAppAuthEntry {
  /** `creds`, or a Signal key type (`session`, `pre-key`, `sender-key`, `app-state-sync-key`, …). */
  category: string;
  /** The key's id; `''` for the single `creds` document. */
  keyId: string;
  /** Serialised (Baileys' BufferJSON encoding); the store does not interpret it. */
  value: string | null;
}

export interface WhatsAppAuthRepository {
  /** The stored values of these ids (missing ones are absent from the map). */
  read(session: string, category: string, keyIds: string[]): Promise<Map<string, string>>;
  /** Upserts (or deletes, for `value: null`) every entry atomically. */
  write(session: string, entries: WhatsAppAuthEntry[], now: Date): Promise<void>;
  /** Forgets the session entirely (logout); returns how many values were deleted. */
  clear(session: string): Promise<number>;
}

/** What decrypting a vote needs: the poll as sent and the 32-byte message secret it was encrypted with. */
export interface WhatsAppPollRecord {
  question: string;
  options: string[];
  /** Base64 of the poll creation message's `messageSecret`. */
  secret: string;
}

export interface WhatsAppSentMessage {
  /** WhatsApp's message id (`key.id`). */
  providerMessageId: string;
  session: string;
  outboundId: string;
  participantId: string;
  remoteJid: string;
  kind: 'text' | 'poll';
  poll?: WhatsAppPollRecord;
  createdAt: Date;
}

export interface WhatsAppMessageRepository {
  /** Records a sent message; recording the same provider id again changes nothing. */
  record(message: WhatsAppSentMessage): Promise<void>;
  get(providerMessageId: string): Promise<WhatsAppSentMessage | undefined>;
  /** The message sent for an outbound id (a retried delivery must not send twice). */
  getByOutboundId(outboundId: string): Promise<WhatsAppSentMessage | undefined>;
}

// ---------------------------------------------------------------------------------------------------------------
// Deliveries (append-only receipts of outbound messages)

/** One fact about an outbound message: sent (with the provider's id), delivered, read, failed… */
export interface NewDeliveryRecord {
  outboundId: string;
  participantId?: string;
  channel: string;
  providerMessageId?: string;
  /** One of `DELIVERY_STATUSES` (channels/channel.ts). */
  status: string;
  errorCode?: string;
  errorMessage?: string;
  createdAt: Date;
}

export interface DeliveryRecord extends NewDeliveryRecord {
  id: number;
}

export interface DeliveryRepository {
  record(delivery: NewDeliveryRecord): Promise<DeliveryRecord>;
  /** The newest record of each of these outbound ids (ids without any are absent). */
  latest(outboundIds: readonly string[]): Promise<Map<string, DeliveryRecord>>;
  /** Every record of one outbound message, oldest first. */
  listFor(outboundId: string): Promise<DeliveryRecord[]>;
  /** The outbound message a provider id belongs to: the record that carried it, or undefined. */
  findByProviderId(channel: string, providerMessageId: string): Promise<DeliveryRecord | undefined>;
}

// ---------------------------------------------------------------------------------------------------------------
// LLM calls (provenance)

export interface NewLlmCall {
  participantId?: string;
  /** `intake`, `feedback`, `prompt-generator`… */
  purpose: string;
  model: string;
  /** The provider base URL's host (`api.openai.com`, `localhost:11434`); never the key. */
  providerHost: string;
  temperature?: number;
  /** The prompt file whose text the system message used (`intake_system.txt`). */
  promptFile?: string;
  /** A short hash of the system prompt text actually sent. */
  promptVersion?: string;
  promptTokens?: number;
  completionTokens?: number;
  totalTokens?: number;
  latencyMs: number;
  /** `success` or an error code (`llm_error`, `unavailable`…). */
  outcome: string;
  error?: string;
  createdAt: Date;
}

export interface LlmCall extends NewLlmCall {
  id: number;
}

export interface LlmCallRepository {
  /** Returns the new row's id. */
  record(call: NewLlmCall): Promise<number>;
  getMany(ids: readonly number[]): Promise<LlmCall[]>;
}

// ---------------------------------------------------------------------------------------------------------------
// LLM outages: while a participant's messages cannot be answered because the model is unavailable

export interface LlmOutage {
  participantId: string;
  /** When the model call whose failure started it failed. */
  startedAt: Date;
  /** The inbound message that call was answering. */
  sourceMessageId: string | undefined;
}

export interface LlmOutageRepository {
  /**
   * Starts the participant's outage unless one is in progress; true when this call started it. One statement: of
   * callers racing (two instances), exactly one gets true, and a rolled-back transaction started nothing.
   */
  begin(outage: LlmOutage): Promise<boolean>;
  get(participantId: string): Promise<LlmOutage | undefined>;
  /** Ends the participant's outage; true when one was in progress. */
  end(participantId: string): Promise<boolean>;
}

// ---------------------------------------------------------------------------------------------------------------
// Broadcasts

export interface Broadcast {
  id: string;
  text: string;
  filter: Record<string, unknown>;
  recipients: number;
  createdAt: Date;
}

export interface BroadcastRepository {
  create(broadcast: Broadcast): Promise<void>;
  get(id: string): Promise<Broadcast | undefined>;
}

// ---------------------------------------------------------------------------------------------------------------
// Research reads: keyset pages, so an export of a million rows never holds more than one page.

export interface ResearchFilter {
  /** Only these participants (empty or absent: all). */
  participantIds?: readonly string[];
  /** Only rows created at or after this instant. */
  since?: Date | undefined;
}

export interface ResearchReadRepository {
  /** By id, after `afterId` (exclusive). `since` filters on the enrolment time. */
  participantsPage(filter: ResearchFilter, afterId: string | undefined, limit: number): Promise<Participant[]>;
  transcriptPage(filter: ResearchFilter, afterId: number | undefined, limit: number): Promise<TranscriptEntry[]>;
  eventsPage(filter: ResearchFilter, afterId: number | undefined, limit: number): Promise<StoredEvent[]>;
  /** By id (text order). */
  jobsPage(filter: ResearchFilter, afterId: string | undefined, limit: number): Promise<Job[]>;
  llmCallsPage(filter: { since?: Date; until?: Date }, afterId: number | undefined, limit: number): Promise<LlmCall[]>;
  /** The jobs of `kind` of these participants created within [from, to] (inclusive), e.g. one page's deliveries. */
  jobsCreatedBetween(kind: string, participantIds: readonly string[], from: Date, to: Date): Promise<Job[]>;
  /** How many jobs whose dedup key starts with `prefix` are in each status (broadcast progress). */
  jobStatusCountsByKeyPrefix(prefix: string): Promise<Partial<Record<JobStatus, number>>>;
}

// ---------------------------------------------------------------------------------------------------------------
// Web-chat tokens (the private `/chat/<token>` links)

export interface WebChatToken {
  token: string;
  participantId: string;
  createdAt: Date;
  revokedAt: Date | undefined;
}

export interface WebChatTokenRepository {
  /** Revokes the participant's active tokens and stores `token` as the active one, in one transaction. */
  issue(participantId: string, token: string, now: Date): Promise<WebChatToken>;
  /** The participant's token that is not revoked, if any. */
  getActive(participantId: string): Promise<WebChatToken | undefined>;
  /** The token row, revoked or not (the caller checks `revokedAt`). */
  find(token: string): Promise<WebChatToken | undefined>;
  /** Revokes every active token of the participant; returns how many. */
  revokeAll(participantId: string, now: Date): Promise<number>;
}

// ---------------------------------------------------------------------------------------------------------------
// The telegram channel: one-time start codes, which chat is whose, and what was sent (native polls with their ids)

export interface TelegramStartCode {
  /** SHA-256 (hex) of the code: the code itself is only ever in the link. */
  codeHash: string;
  participantId: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface TelegramSentMessage {
  outboundId: string;
  participantId: string;
  chatId: string;
  /** Telegram's message id (unique within its chat). */
  messageId: string;
  /** A native poll: Telegram's poll id, and the question and options as sent (`poll_answer` names option indexes). */
  poll?: { pollId: string; question: string; options: string[] };
  createdAt: Date;
}

export interface TelegramRepository {
  /** Stores a new code; the participant's used or expired codes are deleted with it. */
  issueStartCode(code: TelegramStartCode, now: Date): Promise<void>;
  /**
   * Uses a code up: the participant it was issued for, if it is unused and unexpired (once: a second use finds
   * nothing); every other unused code of that participant is used up with it. Undefined for any other code.
   */
  useStartCode(codeHash: string, now: Date): Promise<string | undefined>;
  /** Binds the chat to the participant, replacing the participant's previous chat and the chat's previous owner. */
  linkChat(participantId: string, chatId: string, now: Date): Promise<void>;
  chatOf(participantId: string): Promise<string | undefined>;
  participantOfChat(chatId: string): Promise<string | undefined>;
  recordSent(message: TelegramSentMessage): Promise<void>;
  sentByOutboundId(outboundId: string): Promise<TelegramSentMessage | undefined>;
  /** The poll message of a Telegram poll id. */
  sentPoll(pollId: string): Promise<TelegramSentMessage | undefined>;
}
