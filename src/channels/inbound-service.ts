/**
 * The inbound pipeline, shared by every channel: a participant's message is first recorded durably (deduplicated
 * by the provider's message id) and acknowledged; it is processed afterwards, in the background, in arrival order
 * per participant. Processing marks it processed or failed; messages still `received` after a crash are processed
 * again on start-up (`recoverUnprocessed`), so every message is processed at least once.
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
import type { Messenger } from '../engine/messenger.ts';
import { readValue } from '../engine/participant-data.ts';
import type { Log } from '../observability/log.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ParticipantService } from '../participants/participant-service.ts';
import type { Clock } from '../scheduling/clock.ts';
import { createInProcessLock } from '../store/participant-lock.ts';
import type { InboundMessage, Job, Store } from '../store/store.ts';
import type { ChannelInboundMessage } from './channel.ts';
import { matchPollOption } from './poll-text.ts';

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
  /** Schedules every message recorded but never processed (crash recovery). Returns how many. */
  recoverUnprocessed(): Promise<number>;
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
  /**
   * Outages lose nothing: when set, a turn whose model call fails keeps its message pending (later messages of the
   * participant wait behind it), a durable `llm_outage_retry` job retries it with back-off, and the participant gets
   * at most one notice per outage. Without it the engine answers with its "assistant unavailable" fallback.
   */
  outage?: LlmOutageOptions;
}

export interface LlmOutageOptions {
  messenger: Pick<Messenger, 'send'>;
  /** `LLM_OUTAGE_RETRY_FOR`: how long after the first failure the message is retried. */
  retryForMs: number;
  /** `LLM_OUTAGE_NOTICE`: '' sends none. */
  notice: string;
  /** Wakes the job runner after a retry is enqueued. */
  notify?: () => void;
  /** Metrics: a message held, answered after an outage, or given up. */
  onOutage?: (outcome: 'held' | 'recovered' | 'failed') => void;
}

export const LLM_OUTAGE_RETRY_JOB = 'llm_outage_retry';
export const llmOutageDedupKey = (participantId: string): string => `${LLM_OUTAGE_RETRY_JOB}:${participantId}`;
/** 30 s, 60 s, 120 s, 240 s, then every 5 minutes. */
export function llmOutageBackoff(attempt: number): number {
  return Math.min(30_000 * 2 ** Math.max(0, attempt - 1), 5 * 60_000);
}

/** The `lastPoll` data key as written by the outbox messenger. */
export interface LastPoll {
  id: string;
  question: string;
  options: string[];
}

/** How far back a poll counts as the one being answered; beyond it the conversation has moved on. */
const OPEN_POLL_LOOKBACK_ENTRIES = 30;
/** How far back a native answer's poll is looked up in the transcript (a few days of a study). */
const POLL_LOOKUP_ENTRIES = 200;

/**
 * Reads a poll back from its transcript entry, which the outbox records as `question [option | option]`
 * (`describeOutgoing`). Undefined when the entry is not in that shape.
 */
export function parseRecordedPoll(id: string, content: string): LastPoll | undefined {
  const match = /^([\s\S]*) \[([\s\S]*)\]$/.exec(content);
  if (!match?.[1] || match[2] === undefined) return undefined;
  return { id, question: match[1], options: match[2].split(' | ') };
}

export function createInboundService(options: InboundServiceOptions): InboundService {
  const { store, flow, participants, clock, newId, log, metrics } = options;
  // Orders processing per participant in arrival order. It is not the engine's lock (the flow takes that one
  // itself): it only keeps message 2 from overtaking message 1 while message 1 resolves its participant.
  const arrivalOrder = createInProcessLock();
  const inFlight = new Set<Promise<void>>();
  let stopping = false;

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

  /** Open: the poll is among the recent transcript entries and the participant has not written since. */
  async function isPollOpen(participantId: string, poll: LastPoll): Promise<boolean> {
    const recent = await store.transcript.list(participantId, { limit: OPEN_POLL_LOOKBACK_ENTRIES });
    const pollIndex = recent.findIndex((entry) => entry.outboundId === poll.id);
    if (pollIndex < 0) return false;
    return !recent.slice(pollIndex + 1).some((entry) => entry.role === 'user');
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
      return { pollId: poll.id, question: answer.question ?? poll.question, option: answer.option };
    }
    if (!lastPoll || !(await isPollOpen(participantId, lastPoll))) return undefined;
    const option = matchPollOption(message.text, lastPoll.options);
    return option === undefined ? undefined : { pollId: lastPoll.id, question: lastPoll.question, option };
  }

  async function recordIgnored(inbound: InboundMessage, participant: Participant): Promise<void> {
    const now = clock.now();
    await store.transaction(async (tx) => {
      // Kept as study data even though nobody answers it.
      await tx.transcript.append([
        {
          participantId: participant.id,
          role: 'user',
          kind: 'message',
          content: inbound.text || inbound.pollAnswer?.option || '',
          sourceMessageId: inbound.id,
          createdAt: inbound.receivedAt,
        },
      ]);
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

  /** A message recorded in the transcript by an earlier attempt (its model call failed) is not recorded again. */
  async function wasRecorded(inbound: InboundMessage): Promise<boolean> {
    const recent = await store.transcript.list(inbound.participantId, { limit: POLL_LOOKUP_ENTRIES });
    return recent.some((entry) => entry.role === 'user' && entry.sourceMessageId === inbound.id);
  }

  /** Held: an earlier message of the same participant is still waiting for the model (order is kept). */
  async function heldBehindEarlier(inbound: InboundMessage): Promise<boolean> {
    const pending = await store.inbound.listUnprocessed();
    const first = pending.find((candidate) => candidate.participantId === inbound.participantId);
    return first !== undefined && first.id !== inbound.id;
  }

  async function scheduleRetry(participantId: string, since: Date, attempt: number): Promise<void> {
    const now = clock.now();
    await store.jobs.enqueue(
      {
        id: newId('job'),
        kind: LLM_OUTAGE_RETRY_JOB,
        participantId,
        runAt: new Date(now.getTime() + llmOutageBackoff(attempt)),
        payload: { since: since.toISOString(), attempt },
        dedupKey: llmOutageDedupKey(participantId),
      },
      now,
    );
    options.outage?.notify?.();
  }

  /** The first failure of an outage: schedule the retry and send the one notice. */
  async function beginOutage(inbound: InboundMessage, error: string): Promise<void> {
    const outage = options.outage;
    if (!outage) return;
    options.outage?.onOutage?.('held');
    if (await store.jobs.getPendingByKey(llmOutageDedupKey(inbound.participantId))) return;
    const now = clock.now();
    await scheduleRetry(inbound.participantId, now, 1);
    await store.events.record({
      participantId: inbound.participantId,
      type: 'llm-outage',
      data: { error, retry_for_ms: outage.retryForMs },
      sourceMessageId: inbound.id,
      createdAt: now,
    });
    log.warn({ inboundId: inbound.id, participantId: inbound.participantId, error }, 'model unavailable: message held');
    if (outage.notice) {
      await outage.messenger.send(
        inbound.participantId,
        { type: 'text', text: outage.notice },
        { kind: 'notice', sourceMessageId: inbound.id },
      );
    }
  }

  /** 'llm_down': the model call failed and the message is still pending. */
  async function process(inbound: InboundMessage, retrying = false): Promise<'done' | 'llm_down'> {
    try {
      const participant = await store.participants.get(inbound.participantId);
      if (!participant) {
        log.warn({ inboundId: inbound.id, participantId: inbound.participantId }, 'participant gone: message dropped');
        await store.inbound.markProcessed(inbound.id, clock.now());
        return 'done';
      }
      if (participant.status !== ParticipantStatus.ACTIVE) {
        await recordIgnored(inbound, participant);
        log.info(
          { inboundId: inbound.id, participantId: participant.id, status: participant.status },
          'message not answered',
        );
        return 'done';
      }
      if (options.outage && !retrying && (await heldBehindEarlier(inbound))) {
        log.info({ inboundId: inbound.id, participantId: participant.id }, 'message held behind an earlier one');
        return 'llm_down';
      }
      const alreadyRecorded = options.outage ? await wasRecorded(inbound) : false;
      await flow.handleMessage({
        participantId: participant.id,
        text: inbound.text,
        sourceMessageId: inbound.id,
        receivedAt: inbound.receivedAt,
        ...(inbound.pollAnswer ? { pollAnswer: inbound.pollAnswer } : {}),
        ...(options.outage ? { holdOnLlmError: true } : {}),
        ...(alreadyRecorded ? { alreadyRecorded: true } : {}),
      });
      await store.inbound.markProcessed(inbound.id, clock.now());
      if (alreadyRecorded) options.outage?.onOutage?.('recovered');
      return 'done';
    } catch (error) {
      if (error instanceof LlmOutageError && options.outage) {
        if (!retrying) {
          await beginOutage(inbound, errorMessage(error)).catch((outageError: unknown) =>
            log.error({ inboundId: inbound.id, error: errorMessage(outageError) }, 'scheduling an outage retry failed'),
          );
        }
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

  /** Past `LLM_OUTAGE_RETRY_FOR`: every held message fails, visibly (transcript, event, status). */
  async function giveUp(participantId: string, since: Date, attempt: number): Promise<void> {
    const held = (await store.inbound.listUnprocessed()).filter((message) => message.participantId === participantId);
    for (const inbound of held) {
      const now = clock.now();
      const error = `the model was unavailable from ${since.toISOString()} for longer than the retry limit`;
      const recorded = await wasRecorded(inbound);
      await store.transaction(async (tx) => {
        if (!recorded) {
          await tx.transcript.append([
            {
              participantId,
              role: 'user',
              kind: 'message',
              content: inbound.text || inbound.pollAnswer?.option || '',
              sourceMessageId: inbound.id,
              createdAt: inbound.receivedAt,
            },
          ]);
        }
        await tx.events.record({
          participantId,
          type: 'message-failed',
          data: { reason: 'llm_outage', since: since.toISOString(), attempts: attempt, error },
          sourceMessageId: inbound.id,
          createdAt: now,
        });
        await tx.inbound.markFailed(inbound.id, error, now);
      });
      options.outage?.onOutage?.('failed');
      log.error({ inboundId: inbound.id, participantId, since: since.toISOString() }, 'model outage: message failed');
    }
  }

  async function retryHeldUnlocked(job: Job): Promise<void> {
    const participantId = job.participantId;
    if (!participantId || !options.outage) return;
    const sinceText = typeof job.payload['since'] === 'string' ? job.payload['since'] : undefined;
    const since = sinceText ? new Date(sinceText) : clock.now();
    const attempt = typeof job.payload['attempt'] === 'number' ? job.payload['attempt'] : 1;
    for (;;) {
      const next = (await store.inbound.listUnprocessed()).find((message) => message.participantId === participantId);
      if (!next) return;
      const outcome = await process(next, true);
      if (outcome === 'done') continue;
      if (clock.now().getTime() - since.getTime() >= options.outage.retryForMs) {
        await giveUp(participantId, since, attempt + 1);
        return;
      }
      await scheduleRetry(participantId, since, attempt + 1);
      return;
    }
  }

  function schedule(inbound: InboundMessage): void {
    const work = arrivalOrder.run(inbound.participantId, async () => {
      await process(inbound);
    });
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
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
        schedule(inbound);
      }
      return { inboundId: inbound.id, participantId: participant.id, duplicate };
    },
    async recoverUnprocessed() {
      const pending = await store.inbound.listUnprocessed();
      for (const inbound of pending) schedule(inbound);
      if (pending.length > 0)
        log.info({ count: pending.length }, 'processing inbound messages left over from the last run');
      return pending.length;
    },
    retryHeld(job) {
      const work = arrivalOrder.run(job.participantId ?? '', () => retryHeldUnlocked(job));
      const tracked = work.catch(() => undefined);
      inFlight.add(tracked);
      void tracked.finally(() => inFlight.delete(tracked));
      return work;
    },
    idle: waitForInFlight,
    async stop() {
      stopping = true;
      await waitForInFlight();
    },
  };
}
