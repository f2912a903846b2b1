/**
 * The conversation's part of the storage port (`../store.ts`): participants, their flow state, working history,
 * transcript and events, and the provenance of LLM calls. What the engine, its tools and the timers read and write.
 */
import type { FlowState } from '../../domain/flow-state.ts';
import type { Participant, ParticipantStatus } from '../../domain/participant.ts';

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
// The conversation's repositories

export interface ConversationRepositories {
  readonly participants: ParticipantRepository;
  readonly flowStates: FlowStateRepository;
  /** The working history, one row per message (not the transcript: that one is never trimmed). */
  readonly history: ConversationHistoryRepository;
  readonly transcript: TranscriptRepository;
  readonly events: EventRepository;
  /** Provenance of every LLM call (research data). */
  readonly llmCalls: LlmCallRepository;
}
