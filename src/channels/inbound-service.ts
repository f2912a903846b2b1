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
import type { ConversationFlow } from '../engine/conversation-flow.ts';
import { readValue } from '../engine/participant-data.ts';
import { createBuiltInMessageCatalogue } from '../i18n/built-in-catalogues.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { Log } from '../observability/log.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ParticipantService } from '../participants/participant-service.ts';
import type { Clock } from '../scheduling/clock.ts';
import { createInProcessLock } from '../store/participant-lock.ts';
import type { InboundMessage, Store } from '../store/store.ts';
import type { ChannelInboundMessage } from './channel.ts';
import type { OptOutHandler } from './opt-out.ts';
import { matchTypedAnswer, type OpenPoll } from './poll-answer-matching.ts';

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
  const messages = options.messages ?? createBuiltInMessageCatalogue();
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

  /**
   * The polls sent since the participant last wrote, among the recent transcript entries, newest first. The last
   * poll is read from `lastPoll` (exact options); earlier ones from their transcript entries.
   */
  async function openPolls(participantId: string, lastPoll: LastPoll | undefined): Promise<OpenPoll[]> {
    const recent = await store.transcript.list(participantId, { limit: OPEN_POLL_LOOKBACK_ENTRIES });
    const lastUser = recent.findLastIndex((entry) => entry.role === 'user');
    const polls: OpenPoll[] = [];
    for (const entry of recent.slice(lastUser + 1).reverse()) {
      if (entry.kind !== 'poll' || !entry.outboundId) continue;
      const poll = entry.outboundId === lastPoll?.id ? lastPoll : parseRecordedPoll(entry.outboundId, entry.content);
      if (poll) polls.push(poll);
    }
    return polls;
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
    return matchTypedAnswer(message.text, await openPolls(participantId, lastPoll), messages);
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

  async function process(inbound: InboundMessage): Promise<void> {
    try {
      const participant = await store.participants.get(inbound.participantId);
      if (!participant) {
        log.warn({ inboundId: inbound.id, participantId: inbound.participantId }, 'participant gone: message dropped');
        await store.inbound.markProcessed(inbound.id, clock.now());
        return;
      }
      // Before the status check: START must reach a withdrawn participant, STOP a paused one.
      if (await options.optOut?.handle(inbound, participant)) {
        await store.inbound.markProcessed(inbound.id, clock.now());
        return;
      }
      if (participant.status !== ParticipantStatus.ACTIVE) {
        await recordIgnored(inbound, participant);
        log.info(
          { inboundId: inbound.id, participantId: participant.id, status: participant.status },
          'message not answered',
        );
        return;
      }
      await flow.handleMessage({
        participantId: participant.id,
        text: inbound.text,
        sourceMessageId: inbound.id,
        receivedAt: inbound.receivedAt,
        ...(inbound.pollAnswer ? { pollAnswer: inbound.pollAnswer } : {}),
      });
      await store.inbound.markProcessed(inbound.id, clock.now());
    } catch (error) {
      log.error(
        { inboundId: inbound.id, participantId: inbound.participantId, error: errorMessage(error) },
        'processing an inbound message failed',
      );
      await store.inbound
        .markFailed(inbound.id, errorMessage(error), clock.now())
        .catch((markError: unknown) =>
          log.error({ inboundId: inbound.id, error: errorMessage(markError) }, 'marking an inbound message failed'),
        );
    }
  }

  function schedule(inbound: InboundMessage): void {
    const work = arrivalOrder.run(inbound.participantId, () => process(inbound));
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
    idle: waitForInFlight,
    async stop() {
      stopping = true;
      await waitForInFlight();
    },
  };
}
