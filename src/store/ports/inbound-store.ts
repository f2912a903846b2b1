/**
 * The inbound pipeline's own part of the storage port (`../store.ts`): the durable, deduplicated inbound messages and
 * the model outages that hold them.
 */

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
// The inbound pipeline's repositories

export interface InboundRepositories {
  readonly inbound: InboundMessageRepository;
  /** Model outages in progress, one per participant (the inbound pipeline's "one notice per outage"). */
  readonly llmOutages: LlmOutageRepository;
}
