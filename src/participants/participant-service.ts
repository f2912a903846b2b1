/**
 * A participant's life cycle: enroll, read, update, unregister, and the organiser's views and actions (history,
 * state, admin transition, organiser message). The HTTP API, the inbound pipeline (auto-enrolment) and the CLI all
 * go through here, so the rules live in one place.
 *
 * Writes that touch a participant's conversation state run under the participant lock (the same lock the engine and
 * the job runner take), so an admin action never interleaves with a turn or a timer of the same participant.
 */
import { requireEnabledChannel } from '../channels/channel-registry.ts';
import type { ConversationState } from '../domain/conversation-state.ts';
import { DataKey, type StateData } from '../domain/data-keys.ts';
import { AppError, errorMessage } from '../domain/errors.ts';
import type { NewId } from '../domain/ids.ts';
import { canonicalLanguageTag, ENGLISH, unknownLanguageProblem } from '../domain/language.ts';
import { formatParticipantBackground, type Participant, ParticipantStatus } from '../domain/participant.ts';
import { toE164 } from '../domain/phone.ts';
import { parseProfile, type UserProfile } from '../domain/profile.ts';
import type { ConversationFlow } from '../engine/conversation-flow.ts';
import { appendToHistory, withHistory } from '../engine/conversation-history.ts';
import type { Messenger, SentMessage } from '../engine/messenger.ts';
import { conversationStateOf, newFlowState, writeData } from '../engine/participant-data.ts';
import { stateTransitionJobKey, type TransitionOutcome, transitionInTransaction } from '../engine/state-transition.ts';
import { createBuiltInMessageCatalogue } from '../i18n/built-in-catalogues.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { Log } from '../observability/log.ts';
import type { Clock } from '../scheduling/clock.ts';
import { ensureDailyPromptJob, type RandomSource } from '../scheduling/daily-prompt-jobs.ts';
import { parseScheduleRegistry, type ScheduleInfo } from '../scheduling/schedule-registry.ts';
import { canonicalTimeZone } from '../scheduling/schedule-time.ts';
import { cancelAllParticipantJobs } from '../scheduling/timers/index.ts';
import type { ParticipantLock } from '../store/participant-lock.ts';
import type { DeliveryRecord, Job, Store, TranscriptEntry } from '../store/store.ts';
import { allocateParticipant, stratumFields } from '../trials/allocate-participant.ts';
import { armDecisionPoints } from '../trials/decision-jobs.ts';
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

const DEFAULT_HISTORY_LIMIT = 100;

export function createParticipantService(options: ParticipantServiceOptions): ParticipantService {
  const { store, flow, messenger, lock, clock, newId, log, defaultCountry, study } = options;
  const random = options.random ?? Math.random;
  const messages = options.messages ?? createBuiltInMessageCatalogue(options.defaultLanguage);
  const defaultLanguage = canonicalLanguageTag(options.defaultLanguage ?? ENGLISH) ?? ENGLISH;
  const channelNames = options.channelNames ?? ['webhook'];
  const validChannel = (channel: string | undefined): string | undefined =>
    channel === undefined ? undefined : requireEnabledChannel(channelNames, channel);
  /** Participants enrolled before channels were per participant are on the default channel. */
  const withChannel = (participant: Participant): Participant =>
    participant.channel ? participant : { ...participant, channel: channelNames[0] ?? '' };
  /** The arm in force, read from the allocations: it is not a participant column, and a staff override changes it. */
  async function withArm(participant: Participant): Promise<Participant> {
    if (!study) return participant;
    const allocation = await store.allocations.get(participant.id);
    return allocation ? { ...participant, arm: allocation.armId } : participant;
  }
  async function withArms(list: Participant[]): Promise<Participant[]> {
    if (!study) return list;
    const arms = await store.allocations.armsByParticipant(study.design.study.id);
    return list.map((participant) => {
      const arm = arms.get(participant.id);
      return arm === undefined ? participant : { ...participant, arm };
    });
  }

  async function requireParticipant(participantId: string): Promise<Participant> {
    const participant = await store.participants.get(participantId);
    if (!participant) throw new AppError('not_found', `participant ${participantId} not found`);
    return participant;
  }

  function validTimeZone(timezone: string | undefined): string | undefined {
    if (timezone === undefined) return undefined;
    if (timezone.trim() === '') return '';
    const canonical = canonicalTimeZone(timezone);
    if (!canonical) {
      throw new AppError('invalid_input', `timezone "${timezone}" is not an IANA time zone such as "America/New_York"`);
    }
    return canonical;
  }

  function validLanguage(language: string | undefined): string | undefined {
    if (language === undefined) return undefined;
    const canonical = canonicalLanguageTag(language);
    if (!canonical) {
      throw new AppError('invalid_input', `language ${unknownLanguageProblem(language)}`);
    }
    return canonical;
  }

  async function enroll(request: EnrollmentRequest, enrollment: EnrollmentOptions = {}): Promise<Participant> {
    const phoneNumber = toE164(request.phoneNumber, defaultCountry);
    const timezone = validTimeZone(request.timezone) ?? '';
    const language = validLanguage(request.language) ?? defaultLanguage;
    const channel = validChannel(request.channel) ?? channelNames[0] ?? '';
    const existing = await store.participants.getByPhone(phoneNumber);
    if (existing) {
      throw new AppError('conflict', `phone_number ${phoneNumber} is already enrolled (participant ${existing.id})`);
    }
    const now = clock.now();
    const participant: Participant = {
      id: newId('conv'),
      phoneNumber,
      name: request.name?.trim() ?? '',
      gender: request.gender?.trim() ?? '',
      ethnicity: request.ethnicity?.trim() ?? '',
      background: request.background?.trim() ?? '',
      timezone,
      language,
      channel,
      status: ParticipantStatus.ACTIVE,
      enrolledAt: now,
      createdAt: now,
      updatedAt: now,
    };
    const background = formatParticipantBackground(participant);
    const arm = await store.transaction(async (tx) => {
      // The store's unique phone index is the real guard: two simultaneous enrolments of one number → one conflict.
      await tx.participants.create(participant);
      // In the enrollment's commit: a participant is never enrolled without an arm, nor an arm drawn for nobody.
      const allocation = study
        ? await allocateParticipant(tx, study, {
            participantId: participant.id,
            fields: stratumFields(participant, request.importColumns),
            now,
          })
        : undefined;
      // The participant's first moment of each decision point, durable from the enrollment's commit on.
      const armedDecisions = study ? await armDecisionPoints(tx, study, { participant, now, newId }) : 0;
      if (armedDecisions > 0) tx.afterCommit(() => options.onJobEnqueued?.());
      if (allocation) {
        await tx.events.record({
          participantId: participant.id,
          type: 'participant-allocated',
          data: {
            study_id: allocation.studyId,
            arm: allocation.armId,
            stratum: allocation.stratum,
            design_hash: allocation.designHash,
          },
          createdAt: now,
        });
      }
      await tx.flowStates.save(
        newFlowState(participant.id, now, background ? { [DataKey.participantBackground]: background } : {}),
      );
      await tx.events.record({
        participantId: participant.id,
        type: 'participant-enrolled',
        data: { source: enrollment.source ?? 'api', timezone: timezone || null, channel, language },
        createdAt: now,
      });
      return allocation?.armId;
    });
    log.info({ participantId: participant.id, source: enrollment.source ?? 'api', arm }, 'participant enrolled');
    if (enrollment.greet ?? true) {
      // Enrollment succeeded once the participant is stored; a failed greeting (LLM down, bug) must not undo it.
      try {
        await flow.greet(participant.id);
      } catch (error) {
        log.error({ participantId: participant.id, error: errorMessage(error) }, 'enrollment greeting failed');
      }
    }
    return arm === undefined ? participant : { ...participant, arm };
  }

  async function update(participantId: string, change: ParticipantUpdate): Promise<Participant> {
    const timezone = validTimeZone(change.timezone);
    const language = validLanguage(change.language);
    const channel = validChannel(change.channel);
    return lock.run(participantId, async () => {
      const before = await requireParticipant(participantId);
      const now = clock.now();
      const patch = {
        ...(change.name !== undefined ? { name: change.name.trim() } : {}),
        ...(change.gender !== undefined ? { gender: change.gender.trim() } : {}),
        ...(change.ethnicity !== undefined ? { ethnicity: change.ethnicity.trim() } : {}),
        ...(change.background !== undefined ? { background: change.background.trim() } : {}),
        ...(timezone !== undefined ? { timezone } : {}),
        ...(language !== undefined ? { language } : {}),
        ...(channel !== undefined ? { channel } : {}),
        ...(change.status !== undefined ? { status: change.status } : {}),
      };
      const leavesActive =
        before.status === ParticipantStatus.ACTIVE &&
        change.status !== undefined &&
        change.status !== ParticipantStatus.ACTIVE;
      const returnsToActive = before.status !== ParticipantStatus.ACTIVE && change.status === ParticipantStatus.ACTIVE;
      const updated = await store.transaction(async (tx) => {
        const updated = await tx.participants.update(participantId, { ...patch, updatedAt: now });
        if (!updated) throw new AppError('not_found', `participant ${participantId} not found`);
        // Keep the model's view of the participant in step with the organiser's edits.
        if (['name', 'gender', 'ethnicity', 'background'].some((field) => field in patch)) {
          await writeData(
            tx,
            participantId,
            { [DataKey.participantBackground]: formatParticipantBackground(updated) },
            now,
          );
        }
        // Leaving `active` stops every proactive message: prompts, reminders, timers and queued deliveries.
        const cancelledJobs = leavesActive ? await cancelAllParticipantJobs(tx, participantId, now) : 0;
        // Leaving `active` cancelled the daily prompt; coming back re-arms the schedule the participant still has.
        const rearmed = returnsToActive
          ? await ensureDailyPromptJob(tx, {
              participantId,
              now,
              newId,
              prepTimeMinutes: options.prepTimeMinutes,
              random,
            })
          : undefined;
        await tx.events.record({
          participantId,
          type: 'participant-updated',
          data: {
            fields: Object.keys(patch),
            ...(change.status !== undefined ? { status_from: before.status, status_to: change.status } : {}),
            cancelled_jobs: cancelledJobs,
            ...(rearmed ? { next_prompt_at: rearmed.job.runAt.toISOString() } : {}),
          },
          createdAt: now,
        });
        return { participant: updated, rearmed: rearmed !== undefined };
      });
      if (updated.rearmed) options.onJobEnqueued?.();
      return withArm(withChannel(updated.participant));
    });
  }

  async function unregister(
    participantId: string,
    removal: { purgeTranscript?: boolean } = {},
  ): Promise<{ purgedEntries: number }> {
    return lock.run(participantId, async () => {
      const participant = await requireParticipant(participantId);
      // Order matters: cancel first, then send. The notice's own `deliver_message` job is enqueued after the
      // cancellation, so it survives it, and jobs carry no foreign key, so it survives the participant's removal too.
      await store.transaction((tx) => cancelAllParticipantJobs(tx, participantId, clock.now()));
      try {
        await messenger.send(
          participantId,
          { type: 'text', text: messages.t(participant.language, 'notice.unregistered') },
          { kind: 'notice', module: 'api' },
        );
      } catch (error) {
        log.error({ participantId, error: errorMessage(error) }, 'unregister notice could not be queued');
      }
      const now = clock.now();
      const removed = await store.transaction(async (tx) => {
        await tx.flowStates.delete(participantId);
        await tx.participants.delete(participantId);
        // In the same commit: a kept transcript must not stay readable through the chat link for a moment, or for
        // good if the server stopped between two commits.
        await tx.webChatTokens.revokeAll(participantId, now);
        const purgedEntries = removal.purgeTranscript ? await tx.transcript.purge(participantId) : 0;
        await tx.events.record({
          participantId,
          type: 'participant-deleted',
          data: { purged_transcript: removal.purgeTranscript ?? false, purged_entries: purgedEntries },
          createdAt: now,
        });
        log.info({ participantId, purgedEntries }, 'participant unregistered');
        return { purgedEntries };
      });
      options.onDeleted?.(participantId);
      return removed;
    });
  }

  async function history(
    participantId: string,
    page: { limit?: number; before?: number } = {},
  ): Promise<HistoryEntry[]> {
    const entries = await store.transcript.list(participantId, {
      limit: page.limit ?? DEFAULT_HISTORY_LIMIT,
      ...(page.before !== undefined ? { before: page.before } : {}),
    });
    if (entries.length === 0) await requireParticipant(participantId);
    const outboundIds = entries.flatMap((entry) => (entry.outboundId ? [entry.outboundId] : []));
    const deliveries = outboundIds.length > 0 ? await store.deliveries.latest(outboundIds) : new Map();
    return entries.map((entry) => {
      const delivery = entry.outboundId ? deliveries.get(entry.outboundId) : undefined;
      return delivery ? { ...entry, delivery } : entry;
    });
  }

  async function state(participantId: string): Promise<ParticipantStateView> {
    await requireParticipant(participantId);
    const flowState = await store.flowStates.get(participantId);
    const data = await withHistory(store, participantId, flowState?.stateData ?? {});
    const storedProfile = data[DataKey.userProfile];
    return {
      currentState: flowState?.currentState ?? null,
      conversationState: conversationStateOf(data),
      profile: storedProfile ? parseProfile(storedProfile, clock.now()) : null,
      schedules: parseScheduleRegistry(data[DataKey.scheduleRegistry]),
      pendingJobs: await store.jobs.listPending({ participantId }),
      data,
    };
  }

  async function transition(
    participantId: string,
    request: { target: ConversationState; reason?: string },
  ): Promise<TransitionOutcome> {
    return lock.run(participantId, async () => {
      await requireParticipant(participantId);
      const now = clock.now();
      return store.transaction(async (tx) => {
        // A delayed transition still pending would silently undo the override when it fires.
        const cancelledDelayed = (await tx.jobs.cancelByKey(stateTransitionJobKey(participantId), now)) > 0;
        if (cancelledDelayed) await writeData(tx, participantId, { [DataKey.stateTransitionTimerID]: '' }, now);
        return transitionInTransaction(tx, {
          participantId,
          target: request.target,
          source: 'admin',
          now,
          ...(request.reason ? { reason: request.reason } : {}),
        });
      });
    });
  }

  async function sendOrganiserMessage(participantId: string, text: string): Promise<SentMessage> {
    const content = text.trim();
    if (!content) throw new AppError('invalid_input', 'text must not be empty');
    return lock.run(participantId, async () => {
      await requireParticipant(participantId);
      const sent = await messenger.send(
        participantId,
        { type: 'text', text: content },
        { kind: 'organiser', module: 'api' },
      );
      // The participant saw this message from the same number as the coach: the model must know it was said, or
      // it would contradict it or ignore the participant's answer to it.
      const now = clock.now();
      await appendToHistory(store, participantId, [{ role: 'assistant', content, timestamp: now.toISOString() }]);
      return sent;
    });
  }

  return {
    enroll,
    list: async (filter) => withArms((await store.participants.list(filter)).map(withChannel)),
    get: async (participantId) => withArm(withChannel(await requireParticipant(participantId))),
    async findByPhone(phoneNumber) {
      const participant = await store.participants.getByPhone(toE164(phoneNumber, defaultCountry));
      return participant && withChannel(participant);
    },
    update,
    unregister,
    history,
    state,
    transition,
    sendOrganiserMessage,
  };
}
