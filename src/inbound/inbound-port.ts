/**
 * The inbound service as the channels see it: what a channel hands over (`ChannelInboundMessage`) and what it gets
 * back. Every channel adapter, the web chat and the console push messages through this port; the service itself is
 * `inbound-service.ts`.
 */
import type { PollAnswer } from '../domain/polls.ts';
import type { Job } from '../store/ports/job-queue.ts';

/** A participant's message as a channel hands it to PromptPipe. */
export interface ChannelInboundMessage {
  channel: string;
  /** E.164 sender. */
  from: string;
  text: string;
  providerMessageId?: string;
  timestamp?: Date;
  pollAnswer?: PollAnswer;
}

export interface InboundReceipt {
  /** The durable inbound id (the `sourceMessageId` of everything the turn causes). */
  inboundId: string;
  participantId: string;
  /** True when the provider id was seen before: nothing was recorded and nothing will be processed. */
  duplicate: boolean;
}

export interface InboundService {
  /**
   * Resolves once the message is durably recorded (or recognised as a duplicate); processing follows in the
   * background. Throws `not_found` for an unknown sender (unless auto-enrolment is on), `invalid_input` for an
   * unusable message, `unavailable` while shutting down.
   */
  receive(message: ChannelInboundMessage): Promise<InboundReceipt>;
  /**
   * Schedules the processing of every message recorded but never processed (crash recovery; on PostgreSQL, also the
   * messages of an instance that died). Returns how many participants had some.
   */
  recoverUnprocessed(): Promise<number>;
  /** Runs `recoverUnprocessed` every `intervalMs` until `stop` (the safety net for a dead instance's messages). */
  startRecoveryLoop?(intervalMs: number): void;
  /**
   * The `llm_outage_retry` job: processes the participant's held messages in arrival order; while the model is
   * still down, schedules the next attempt (back-off), and past `LLM_OUTAGE_RETRY_FOR` marks them failed.
   */
  retryHeld(job: Job): Promise<void>;
  /** Resolves when nothing is being processed (tests, the console chat). */
  idle(): Promise<void>;
  /** Refuses new messages and waits for the ones being processed: the turn in flight finishes. */
  stop(): Promise<void>;
}
