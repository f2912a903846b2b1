/**
 * Processing one recorded message, under the participant's lock, never inside a database transaction (the turn calls
 * the LLM): opt-out keywords, the safety screen, a staff takeover, the participant's status, then the conversation
 * turn; it ends marked processed or failed, or held for the model outage.
 *
 * Messages of participants who are not `active` (paused, completed, withdrawn) are recorded in the transcript but
 * not answered: the study stopped talking to them, and an LLM reply would restart the conversation behind the
 * organiser's back.
 *
 * A message left `received` by a crash may have been attempted already: one whose reply was sent before the crash is
 * only marked processed (no second reply), and a turn interrupted after its message was recorded resumes without
 * recording it twice (see the flow).
 */

import type { Clock } from '../domain/clock.ts';
import { errorMessage } from '../domain/errors.ts';
import type { Log } from '../domain/log.ts';
import { type Participant, ParticipantStatus } from '../domain/participant.ts';
import { type ConversationFlow, LlmOutageError } from '../engine/conversation-flow.ts';
import type { SafetyScreen } from '../safety/safety-screen.ts';
import type { InboundMessage, Store } from '../store/store.ts';
import { unansweredMessageEntry } from './inbound-transcript.ts';
import type { LlmOutageHold } from './llm-outage-hold.ts';
import type { OptOutHandler } from './opt-out.ts';

/** 'llm_down': the model call failed and the message is still pending. */
export type ProcessingOutcome = 'done' | 'llm_down';

export interface MessageProcessor {
  process(inbound: InboundMessage, retrying?: boolean): Promise<ProcessingOutcome>;
  /**
   * A message this process has just recorded. When this process is the only one that processes its database's
   * messages (`onlyProcessor`), nobody can have attempted it before its first attempt here, which then skips the
   * look-up of what an earlier attempt left in the transcript.
   */
  received(inboundId: string): void;
}

export interface MessageProcessingOptions {
  store: Store;
  flow: Pick<ConversationFlow, 'handleMessage'>;
  clock: Clock;
  log: Log;
  /** See `MessageProcessor.received`. */
  onlyProcessor: boolean;
  optOut?: OptOutHandler;
  safety?: Pick<SafetyScreen, 'screen'>;
  takeover?: { intercept(inbound: InboundMessage): Promise<boolean> };
  answerWhilePaused?: boolean;
  outage?: LlmOutageHold;
}

export function createMessageProcessor(options: MessageProcessingOptions): MessageProcessor {
  const { store, flow, clock, log, outage } = options;
  /** With `onlyProcessor`: messages received here and not yet attempted. */
  const untouched = new Set<string>();

  async function recordIgnored(inbound: InboundMessage, participant: Participant): Promise<void> {
    const now = clock.now();
    await store.transaction(async () => {
      // Kept as study data even though nobody answers it.
      await store.transcript.append([unansweredMessageEntry(inbound)]);
      await store.events.record({
        participantId: participant.id,
        type: 'message-ignored',
        data: { reason: `participant is ${participant.status}` },
        sourceMessageId: inbound.id,
        createdAt: now,
      });
      await store.inbound.markProcessed(inbound.id, now);
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

  /** The conversation turn, marked processed in the reply's transaction. */
  async function answer(inbound: InboundMessage, participant: Participant, firstAttempt: boolean): Promise<void> {
    const prior = firstAttempt ? { recorded: false, answered: false } : await priorAttempt(inbound);
    if (prior.answered) {
      // The turn finished and its reply was sent, but the instance stopped before marking the message: no second
      // reply.
      log.warn({ inboundId: inbound.id, participantId: participant.id }, 'message was already answered');
      await store.inbound.markProcessed(inbound.id, clock.now());
      return;
    }
    let marked = false;
    /** In the unit of work it is called in: the reply's, or its own when the turn sent none. */
    const markAnswered = async (): Promise<void> => {
      await store.inbound.markProcessed(inbound.id, clock.now());
      await outage?.answered(inbound);
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
        await markAnswered();
        store.afterCommit(() => {
          marked = true;
        });
      },
    });
    if (!marked) await store.transaction(markAnswered);
  }

  async function process(inbound: InboundMessage, retrying = false): Promise<ProcessingOutcome> {
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
      await answer(inbound, participant, firstAttempt);
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

  return {
    process,
    received(inboundId) {
      if (options.onlyProcessor) untouched.add(inboundId);
    },
  };
}
