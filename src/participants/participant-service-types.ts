/** The participant service's port: what the API, the inbound pipeline and the CLI call, and what it is built from. */

import type { Clock } from '../domain/clock.ts';
import type { ConversationState } from '../domain/conversation-state.ts';
import type { StateData } from '../domain/data-keys.ts';
import type { NewId } from '../domain/ids.ts';
import type { Log } from '../domain/log.ts';
import type { Participant, ParticipantStatus } from '../domain/participant.ts';
import type { UserProfile } from '../domain/profile.ts';
import type { ConversationFlow } from '../engine/conversation-flow.ts';
import type { Messenger, SentMessage } from '../engine/messenger.ts';
import type { TransitionOutcome } from '../engine/state-transition.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { RandomSource } from '../scheduling/daily-prompt-jobs.ts';
import type { ScheduleInfo } from '../scheduling/schedule-registry.ts';
import type { ParticipantLock } from '../store/participant-lock.ts';
import type { DeliveryRecord, Job, Store, TranscriptEntry } from '../store/store.ts';
import type { StudyInForce } from '../trials/study-design-file.ts';

/**
 * Sent to a participant when they are unregistered, before anything is removed: the English text of the catalogue
 * key `notice.unregistered` (the participant's language is used when sending).
 */
export const UNREGISTER_NOTICE =
  'You have been unregistered from this study and will not receive further messages. Thank you for taking part!';

/** The editable descriptive fields of a participant. */
export interface ParticipantDetails {
  name?: string;
  gender?: string;
  ethnicity?: string;
  background?: string;
  /** IANA time zone; empty clears it. */
  timezone?: string;
  /** BCP 47 language tag (`en`, `es`, `pt-BR`); enrollment defaults it to `DEFAULT_LANGUAGE`. */
  language?: string;
  /** One of the enabled channels (`PROMPTPIPE_CHANNEL`); the default channel when absent at enrolment. */
  channel?: string;
}

export interface EnrollmentRequest extends ParticipantDetails {
  /** Any common format; national numbers use `DEFAULT_COUNTRY`. */
  phoneNumber: string;
  /** A bulk import's other columns, by header: a stratified design may stratify on them (`import.<column>`). */
  importColumns?: Readonly<Record<string, string>>;
}

export interface EnrollmentOptions {
  /** Generate and send the greeting (default true). Auto-enrolment skips it: the participant's message is the start. */
  greet?: boolean;
  /** Who enrolled: `api`, `auto-enroll`, `cli`. Recorded in the `participant-enrolled` event. */
  source?: string;
}

export interface ParticipantUpdate extends ParticipantDetails {
  status?: ParticipantStatus;
}

/** What the organiser sees of a participant's conversation. */
/** A transcript entry as the organiser sees it: outbound messages carry their latest delivery receipt. */
export interface HistoryEntry extends TranscriptEntry {
  delivery?: DeliveryRecord;
}

export interface ParticipantStateView {
  /** `CONVERSATION_ACTIVE`, or null when the participant has no flow state (yet). */
  currentState: string | null;
  conversationState: ConversationState;
  /** The stored profile, or null before intake saved anything. */
  profile: UserProfile | null;
  /** The `scheduleRegistry` entries. */
  schedules: ScheduleInfo[];
  pendingJobs: Job[];
  data: StateData;
}

export interface ParticipantService {
  enroll(request: EnrollmentRequest, options?: EnrollmentOptions): Promise<Participant>;
  list(filter?: { status?: ParticipantStatus }): Promise<Participant[]>;
  /** Throws `AppError('not_found')`. */
  get(participantId: string): Promise<Participant>;
  /** Canonicalises the phone number first; undefined when nobody holds it. */
  findByPhone(phoneNumber: string): Promise<Participant | undefined>;
  update(participantId: string, update: ParticipantUpdate): Promise<Participant>;
  /**
   * Sends the unregister notice, cancels every job, clears the flow state, revokes the web-chat links, removes the
   * participant. Every way of deleting (API, dashboard) comes through here, so none can leave a chat link readable.
   */
  unregister(participantId: string, options?: { purgeTranscript?: boolean }): Promise<{ purgedEntries: number }>;
  /**
   * The transcript, oldest first. Works for unregistered participants whose transcript was kept (it is study
   * data); unknown ids with no transcript are not found.
   */
  history(participantId: string, page?: { limit?: number; before?: number }): Promise<HistoryEntry[]>;
  state(participantId: string): Promise<ParticipantStateView>;
  /** Admin override of the conversation sub-state; cancels a pending delayed transition so the override sticks. */
  transition(
    participantId: string,
    request: { target: ConversationState; reason?: string },
  ): Promise<TransitionOutcome>;
  /** The organiser writes to the participant; recorded in the transcript and the working history. */
  sendOrganiserMessage(participantId: string, text: string): Promise<SentMessage>;
}

export interface ParticipantServiceOptions {
  store: Store;
  flow: Pick<ConversationFlow, 'greet'>;
  messenger: Messenger;
  lock: ParticipantLock;
  clock: Clock;
  newId: NewId;
  log: Log;
  /** ISO 3166 alpha-2 code for national phone numbers. */
  defaultCountry: string;
  /** The enabled channels, the default first (`PROMPTPIPE_CHANNEL`). Default: the webhook channel alone. */
  channelNames?: readonly string[];
  /** `SCHEDULER_PREP_TIME_MINUTES`: re-arming a schedule when a participant becomes active again. */
  prepTimeMinutes: number;
  /** Draws the minute of a random schedule; defaults to `Math.random`. */
  random?: RandomSource;
  /** Called after a job is committed (`runner.notify`), so the runner recomputes its wake-up time. */
  onJobEnqueued?: () => void;
  /** `DEFAULT_LANGUAGE`: the language of a participant enrolled without one (default `en`). */
  defaultLanguage?: string;
  /** The fixed texts (the unregister notice); defaults to the built-in catalogues. */
  messages?: MessageCatalogue;
  /** Called once a participant is deleted (their web-chat links revoked with them): open chat streams end at once. */
  onDeleted?: (participantId: string) => void;
  /** The trial design in force (`STUDY_DESIGN_FILE`): each enrollment is allocated an arm in its transaction. */
  study?: StudyInForce;
}
