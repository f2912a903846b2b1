/**
 * The research side's part of the storage port (`../store.ts`): keyset-paged reads of whole tables for exports and
 * statistics, and broadcasts.
 */
import type { Participant } from '../../domain/participant.ts';
import type { LlmCall, StoredEvent, TranscriptEntry } from './conversation-store.ts';
import type { Job, JobStatus } from './job-queue.ts';

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
// The research side's repositories

export interface ResearchRepositories {
  readonly broadcasts: BroadcastRepository;
  /** Keyset-paged reads of whole tables for exports and statistics (research data). */
  readonly research: ResearchReadRepository;
}
