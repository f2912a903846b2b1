/**
 * The inbound pipeline, shared by every channel: a participant's message is first recorded durably (deduplicated
 * by the provider's message id) and acknowledged; it is processed afterwards, in the background, in arrival order
 * per participant. Processing marks it processed or failed.
 *
 * Exactly once across instances: processing is a drain of the participant's messages still `received`, oldest
 * (`arrival_order`) first, under the participant lock (an advisory lock on PostgreSQL, shared by every instance).
 * Whichever instance received a message, the instance that holds the lock processes it: the receiver asks for the
 * lock and either drains the message itself or finds that the holder already did. Processing is never inside a
 * database transaction (the turn calls the LLM). A message left `received` by an instance that died is drained by a
 * survivor's periodic sweep (`PROMPTPIPE_RECOVERY_INTERVAL`, and on start-up) as soon as the dead instance's lock is
 * gone; a message whose reply was already sent before the crash is only marked processed (no second reply), and a
 * turn interrupted after its message was recorded resumes without recording it twice (see the flow).
 *
 * Poll answers are resolved when the message is received, against the poll the participant was looking at (the
 * `lastPoll` data key): a native `poll_answer` gets its question; a reply that is exactly an option's number or text
 * while that poll is still open (no participant message since it was sent) becomes the structured answer.
 *
 * Messages of participants who are not `active` (paused, completed, withdrawn) are recorded in the transcript but
 * not answered: the study stopped talking to them, and an LLM reply would restart the conversation behind the
 * organiser's back.
 */
import { DataKey } from '../domain/data-keys.ts';
import { AppError, errorMessage } from '../domain/errors.ts';
import type { NewId } from '../domain/ids.ts';
import { type Participant, ParticipantStatus } from '../domain/participant.ts';
import type { PollAnswer } from '../domain/polls.ts';
import { type ConversationFlow, LlmOutageError } from '../engine/conversation-flow.ts';
import { readValue } from '../engine/participant-data.ts';
import { createBuiltInMessageCatalogue } from '../i18n/built-in-catalogues.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { Log } from '../observability/log.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ParticipantService } from '../participants/participant-service.ts';
import type { SafetyScreen } from '../safety/safety-screen.ts';
import type { Clock } from '../scheduling/clock.ts';
import { createInProcessLock, type ParticipantLock } from '../store/participant-lock.ts';
import type { InboundMessage, Job, Store } from '../store/store.ts';
import type { ChannelInboundMessage } from './channel.ts';
import { unansweredMessageEntry } from './inbound-transcript.ts';
import { createLlmOutageHold, type LlmOutageOptions } from './llm-outage-hold.ts';
import type { OptOutHandler } from './opt-out.ts';
import { matchTypedAnswer, type OpenPoll } from './poll-answer-matching.ts';
import { latestPollRun, parseRecordedPoll, type RecordedPoll } from './recorded-polls.ts';

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

export interface InboundServiceOptions {
  store: Store;
  flow: Pick<ConversationFlow, 'handleMessage'>;
  participants: Pick<ParticipantService, 'findByPhone' | 'enroll'>;
  clock: Clock;
  newId: NewId;
  log: Log;
  metrics: Pick<Metrics, 'recordInboundMessage'>;
  /** `AUTO_ENROLL_NEW_USERS`: an unknown sender is enrolled (without the greeting) instead of refused. */
  autoEnroll: boolean;
  /** Typed poll answers are recognised in every catalogue language; defaults to the built-in catalogues. */
  messages?: MessageCatalogue;
  /** STOP / START handling; without it keywords are ordinary messages. */
  optOut?: OptOutHandler;
  /** The engine's participant lock (shared by every instance on PostgreSQL). Default: an in-process lock. */
  lock?: ParticipantLock;
  /**
   * Outages lose nothing: when set, a turn whose model call fails keeps its message pending (later messages of the
   * participant wait behind it), a durable `llm_outage_retry` job retries it with back-off, and the participant gets
   * at most one notice per outage. Without it the engine answers with its "assistant unavailable" fallback.
   */
  outage?: LlmOutageOptions;
  /**
   * This process is the only one that processes messages (SQLite: one process per database): a message it received
   * itself is untouched until it first processes it, so that first attempt skips the look-up of what an earlier
   * attempt left in the transcript. Elsewhere another instance may have made that attempt and died.
   */
  onlyProcessor?: boolean;
  /**
   * Risk detection before the coach's turn (safety-screen.ts): a flagged message gets the study's safety message and
   * alerts staff; the coach's turn is skipped unless configured otherwise. Every participant's messages are screened,
   * whatever their status: a person in crisis is answered even when the study has stopped talking to them.
   */
  safety?: Pick<SafetyScreen, 'screen'>;
  /** A conversation taken over by staff: the message is recorded for them, the coach does not answer it. */
  takeover?: { intercept(inbound: InboundMessage): Promise<boolean> };
  /** `PAUSE_ANSWERS_MESSAGES`: a paused participant's own messages are answered (vacation mode stops only prompts). */
  answerWhilePaused?: boolean;
}

export {
  LLM_OUTAGE_RETRY_JOB,
  type LlmOutageOptions,
  llmOutageBackoff,
  llmOutageDedupKey,
} from './llm-outage-hold.ts';

/** The last poll sent (`lastPoll` data key): the poll as recorded, with its exact options. */
export type LastPoll = RecordedPoll;

/** How far back a poll counts as the one being answered; beyond it the conversation has moved on. */
const OPEN_POLL_LOOKBACK_ENTRIES = 30;
/** How far back a native answer's poll is looked up in the transcript (a few days of a study). */
const POLL_LOOKUP_ENTRIES = 200;

export { parseRecordedPoll } from './recorded-polls.ts';

export function createInboundService(options: InboundServiceOptions): InboundService {
  const { store, flow, participants, clock, newId, log, metrics } = options;
  const messages = options.messages ?? createBuiltInMessageCatalogue();
  // The engine's lock, taken for the whole drain of a participant's messages (the flow takes it again, re-entrantly,
  // for each turn), so nothing else of this participant runs between two of their messages on any instance.
  const lock = options.lock ?? createInProcessLock();
  const outage = options.outage && createLlmOutageHold({ store, clock, newId, log, options: options.outage });
  const inFlight = new Set<Promise<void>>();
  /** Participants with a drain queued or running here: a sweep does not queue another. */
  const draining = new Map<string, number>();
  /** With `onlyProcessor`: messages received here and not yet attempted (see the option). */
  const untouched = new Set<string>();
  let stopping = false;
  let recoveryTimer: NodeJS.Timeout | undefined;

  async function resolveSender(message: ChannelInboundMessage): Promise<Participant> {
    const existing = await participants.findByPhone(message.from);
    if (existing) return existing;
    if (!options.autoEnroll) {
      throw new AppError('not_found', `no participant is enrolled with phone number ${message.from}`);
    }
    try {
      return await participants.enroll({ phoneNumber: message.from }, { greet: false, source: 'auto-enroll' });
    } catch (error) {
      // Two first messages of one new sender race to enrol them: the loser uses the winner's enrolment.
      const winner =
        error instanceof AppError && error.code === 'conflict' && (await participants.findByPhone(message.from));
      if (winner) return winner;
      throw error;
    }
  }

  async function readLastPoll(participantId: string): Promise<LastPoll | undefined> {
    const raw = await readValue(store, participantId, DataKey.lastPoll);
    if (!raw) return undefined;
    try {
      const value = JSON.parse(raw) as Partial<LastPoll>;
      if (typeof value.id !== 'string' || typeof value.question !== 'string' || !Array.isArray(value.options)) {
        return undefined;
      }
      return { id: value.id, question: value.question, options: value.options.filter((o) => typeof o === 'string') };
    } catch {
      return undefined;
    }
  }

  /**
   * The polls sent since the participant last wrote, among the recent transcript entries, newest first (the last
   * poll is read from `lastPoll`, exact options; earlier ones from their transcript entries), and the latest run of
   * polls sent one after another, oldest first, whose options are numbered on (recorded-polls.ts).
   */
  async function openPolls(
    participantId: string,
    lastPoll: LastPoll | undefined,
  ): Promise<{ open: OpenPoll[]; numbered: OpenPoll[] }> {
    const recent = await store.transcript.afterLastMessage(participantId, { limit: OPEN_POLL_LOOKBACK_ENTRIES });
    const open: OpenPoll[] = [];
    for (const entry of recent.toReversed()) {
      if (entry.kind !== 'poll' || !entry.outboundId) continue;
      const poll = entry.outboundId === lastPoll?.id ? lastPoll : parseRecordedPoll(entry.outboundId, entry.content);
      if (poll) open.push(poll);
    }
    const numbered = latestPollRun(recent).map((poll) => (poll.id === lastPoll?.id ? lastPoll : poll));
    return { open, numbered };
  }

  /**
   * The poll a native answer refers to: the last poll, or an earlier one (the Done poll is often followed by the
   * intensity poll, and people answer both) recovered from its transcript entry.
   */
  async function findPoll(participantId: string, pollId: string, lastPoll: LastPoll | undefined) {
    if (lastPoll?.id === pollId) return lastPoll;
    const recent = await store.transcript.list(participantId, { limit: POLL_LOOKUP_ENTRIES });
    const entry = recent.findLast((candidate) => candidate.outboundId === pollId);
    return entry ? parseRecordedPoll(pollId, entry.content) : undefined;
  }

  async function resolvePollAnswer(
    participantId: string,
    message: ChannelInboundMessage,
  ): Promise<PollAnswer | undefined> {
    const lastPoll = await readLastPoll(participantId);
    if (message.pollAnswer) {
      const answer = message.pollAnswer;
      const poll = answer.pollId === undefined ? lastPoll : await findPoll(participantId, answer.pollId, lastPoll);
      if (!poll) return answer;
      // A reply id names the option by position: the poll's own words, even when the provider shortened the title.
      const byIndex = answer.optionIndex === undefined ? undefined : poll.options[answer.optionIndex];
      return { pollId: poll.id, question: answer.question ?? poll.question, option: byIndex ?? answer.option };
    }
    const { open, numbered } = await openPolls(participantId, lastPoll);
    return matchTypedAnswer(message.text, open, messages, numbered);
  }

  async function recordIgnored(inbound: InboundMessage, participant: Participant): Promise<void> {
    const now = clock.now();
    await store.transaction(async (tx) => {
      // Kept as study data even though nobody answers it.
      await tx.transcript.append([unansweredMessageEntry(inbound)]);
      await tx.events.record({
        participantId: participant.id,
        type: 'message-ignored',
        data: { reason: `participant is ${participant.status}` },
        sourceMessageId: inbound.id,
        createdAt: now,
      });
      await tx.inbound.markProcessed(inbound.id, now);
    });
  }

  /**
   * What an earlier attempt at this message left in the transcript: the message recorded (its model call failed, so it
   * is not recorded again) and a reply to it (the turn completed before a crash, so it is not answered again).
   */
  async function priorAttempt(inbound: InboundMessage): Promise<{ recorded: boolean; answered: boolean }> {
    const linked = await store.transcript.forSourceMessage(inbound.participantId, inbound.id);
    return {
      recorded: linked.some((entry) => entry.role === 'user'),
      answered: linked.some((entry) => entry.role === 'assistant' && entry.kind === 'reply'),
    };
  }

  /** 'llm_down': the model call failed and the message is still pending. */
  async function process(inbound: InboundMessage, retrying = false): Promise<'done' | 'llm_down'> {
    let participant: Participant | undefined;
    // Taken at once: whatever this attempt does, the next one looks at the transcript.
    const firstAttempt = untouched.delete(inbound.id);
    try {
      participant = await store.participants.get(inbound.participantId);
      if (!participant) {
        log.warn({ inboundId: inbound.id, participantId: inbound.participantId }, 'participant gone: message dropped');
        await store.inbound.markProcessed(inbound.id, clock.now());
        return 'done';
      }
      // Before the status check: START must reach a withdrawn participant, STOP a paused one.
      if (await options.optOut?.handle(inbound, participant)) {
        await store.inbound.markProcessed(inbound.id, clock.now());
        return 'done';
      }
      if (options.safety && !(await options.safety.screen(inbound, participant)).coachTurn) return 'done';
      if (await options.takeover?.intercept(inbound)) return 'done';
      const answered =
        participant.status === ParticipantStatus.ACTIVE ||
        (participant.status === ParticipantStatus.PAUSED && options.answerWhilePaused === true);
      if (!answered) {
        await recordIgnored(inbound, participant);
        log.info(
          { inboundId: inbound.id, participantId: participant.id, status: participant.status },
          'message not answered',
        );
        return 'done';
      }
      const prior = firstAttempt ? { recorded: false, answered: false } : await priorAttempt(inbound);
      if (prior.answered) {
        // The turn finished and its reply was sent, but the instance stopped before marking the message: no second
        // reply.
        log.warn({ inboundId: inbound.id, participantId: participant.id }, 'message was already answered');
        await store.inbound.markProcessed(inbound.id, clock.now());
        return 'done';
      }
      let marked = false;
      const markAnswered = async (tx: Store): Promise<void> => {
        await tx.inbound.markProcessed(inbound.id, clock.now());
        await outage?.answered(tx, inbound);
      };
      await flow.handleMessage({
        participantId: participant.id,
        text: inbound.text,
        sourceMessageId: inbound.id,
        recorded: prior.recorded,
        receivedAt: inbound.receivedAt,
        ...(inbound.pollAnswer ? { pollAnswer: inbound.pollAnswer } : {}),
        ...(outage ? { holdOnLlmError: true } : {}),
        // Marked processed in the reply's transaction: answered, processed and the outage over commit together.
        withReply: async () => {
          await markAnswered(store);
          store.afterCommit(() => {
            marked = true;
          });
        },
      });
      if (!marked) await store.transaction(markAnswered);
      return 'done';
    } catch (error) {
      if (error instanceof LlmOutageError && outage && participant) {
        await outage
          .hold(inbound, participant, errorMessage(error), retrying)
          .catch((outageError: unknown) =>
            log.error(
              { inboundId: inbound.id, error: errorMessage(outageError) },
              'holding a message for the outage failed',
            ),
          );
        return 'llm_down';
      }
      log.error(
        { inboundId: inbound.id, participantId: inbound.participantId, error: errorMessage(error) },
        'processing an inbound message failed',
      );
      await store.inbound
        .markFailed(inbound.id, errorMessage(error), clock.now())
        .catch((markError: unknown) =>
          log.error({ inboundId: inbound.id, error: errorMessage(markError) }, 'marking an inbound message failed'),
        );
      return 'done';
    }
  }

  /**
   * Processes the participant's `received` messages oldest first, until none is left, or until the model is down:
   * then the first one is held (later ones wait behind it, in order) for the outage retry. Under the participant lock.
   * A drain scheduled for a message it has just `received` (`until`) stops once that one is processed: a message
   * received after it scheduled a drain of its own, which comes next, so looking again would find nothing new.
   */
  async function drain(participantId: string, retrying = false, until?: string): Promise<'done' | 'llm_down'> {
    let previous: string | undefined;
    for (;;) {
      const next = await store.inbound.nextUnprocessed(participantId);
      // The same message twice: it could not even be marked failed (database trouble); the sweep retries later.
      if (!next || next.id === previous) return 'done';
      previous = next.id;
      if ((await process(next, retrying)) === 'llm_down') return 'llm_down';
      if (next.id === until) return 'done';
    }
  }

  function track(participantId: string, work: Promise<unknown>): void {
    draining.set(participantId, (draining.get(participantId) ?? 0) + 1);
    const done = work.then(
      () => undefined,
      (error: unknown) => {
        log.error({ participantId, error: errorMessage(error) }, 'processing inbound messages failed; will retry');
      },
    );
    inFlight.add(done);
    void done.finally(() => {
      inFlight.delete(done);
      const count = (draining.get(participantId) ?? 1) - 1;
      if (count <= 0) draining.delete(participantId);
      else draining.set(participantId, count);
    });
  }

  function schedule(participantId: string, until?: string): void {
    track(
      participantId,
      lock.run(participantId, () => drain(participantId, false, until), { reentrant: true }),
    );
  }

  /** For sweeps: only when nobody (here or on another instance) is processing this participant already. */
  function scheduleIfIdle(participantId: string): void {
    if (draining.has(participantId)) return;
    if (!lock.tryRun) {
      schedule(participantId);
      return;
    }
    track(
      participantId,
      lock.tryRun(participantId, () => drain(participantId), { reentrant: true }),
    );
  }

  async function waitForInFlight(): Promise<void> {
    // Processing one message can schedule nothing new, but recovery may add while we wait: loop until empty.
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  }

  return {
    async receive(message) {
      if (stopping) throw new AppError('unavailable', 'the server is shutting down; send the message again later');
      const participant = await resolveSender(message);
      const pollAnswer = await resolvePollAnswer(participant.id, message);
      const text = message.text.trim() || pollAnswer?.option || '';
      if (!text) throw new AppError('invalid_input', 'text must not be empty (or send a poll_answer)');
      const { message: inbound, duplicate } = await store.inbound.record({
        id: newId('in'),
        channel: message.channel,
        participantId: participant.id,
        from: participant.phoneNumber,
        text,
        receivedAt: clock.now(),
        ...(message.providerMessageId ? { providerMessageId: message.providerMessageId } : {}),
        ...(pollAnswer ? { pollAnswer } : {}),
      });
      if (duplicate) {
        log.info(
          { inboundId: inbound.id, providerMessageId: message.providerMessageId },
          'duplicate inbound message ignored',
        );
      } else {
        metrics.recordInboundMessage(message.channel);
        if (options.onlyProcessor) untouched.add(inbound.id);
        schedule(inbound.participantId, inbound.id);
      }
      return { inboundId: inbound.id, participantId: participant.id, duplicate };
    },
    async recoverUnprocessed() {
      if (stopping) return 0;
      const participantIds = (await store.inbound.listParticipantsWithUnprocessed()).filter(
        (participantId) => !draining.has(participantId),
      );
      for (const participantId of participantIds) scheduleIfIdle(participantId);
      if (participantIds.length > 0) {
        log.info({ participants: participantIds.length }, 'processing inbound messages left unprocessed');
      }
      return participantIds.length;
    },
    startRecoveryLoop(intervalMs) {
      if (recoveryTimer) return;
      recoveryTimer = setInterval(() => {
        this.recoverUnprocessed().catch((error: unknown) =>
          log.error({ error: errorMessage(error) }, 'looking for unprocessed inbound messages failed'),
        );
      }, intervalMs);
      recoveryTimer.unref();
    },
    retryHeld(job) {
      const participantId = job.participantId ?? '';
      // The participant lock (every instance), re-entrant so the flow's own turn lock passes: the held messages go
      // first, in arrival order, and no other drain of this participant runs meanwhile.
      const work = lock.run(
        participantId,
        async () => {
          await outage?.retry(job, (id) => drain(id, true));
        },
        { reentrant: true },
      );
      const tracked = work.catch(() => undefined);
      inFlight.add(tracked);
      void tracked.finally(() => inFlight.delete(tracked));
      return work;
    },
    idle: waitForInFlight,
    async stop() {
      stopping = true;
      if (recoveryTimer) clearInterval(recoveryTimer);
      recoveryTimer = undefined;
      await waitForInFlight();
    },
  };
}
