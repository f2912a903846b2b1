/**
 * The inbound pipeline, shared by every channel: a participant's message is first recorded durably (deduplicated
 * by the provider's message id) and acknowledged; it is processed afterwards, in the background, in arrival order
 * per participant. Processing marks it processed or failed.
 *
 * One file per step: who sent it (sender-resolution.ts), which poll it answers (poll-answers.ts), processing one
 * message (message-processing.ts: opt-out, safety, takeover, status, the turn), the per-participant drain under the
 * participant lock (participant-drains.ts), crash recovery (recovery-sweep.ts) and the model-outage hold and retry
 * (llm-outage-hold.ts). This file records and composes them.
 */

import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import type { NewId } from '../domain/ids.ts';
import type { Log } from '../domain/log.ts';
import type { ConversationFlow } from '../engine/conversation-flow.ts';
import { createBuiltInMessageCatalogue } from '../i18n/built-in-catalogues.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ParticipantService } from '../participants/participant-service.ts';
import type { SafetyScreen } from '../safety/safety-screen.ts';
import { createInProcessLock, type ParticipantLock } from '../store/participant-lock.ts';
import type { InboundMessage, Store } from '../store/store.ts';
import type { InboundService } from './inbound-port.ts';
import { createLlmOutageHold, type LlmOutageOptions } from './llm-outage-hold.ts';
import { createMessageProcessor } from './message-processing.ts';
import type { OptOutHandler } from './opt-out.ts';
import { createParticipantDrains } from './participant-drains.ts';
import { createPollAnswerResolution } from './poll-answers.ts';
import { createRecoverySweep } from './recovery-sweep.ts';
import { createSenderResolution } from './sender-resolution.ts';

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
  /**
   * The engine's participant lock (shared by every instance on PostgreSQL). Default: an in-process lock. A lock kept
   * in this process (`processLocal`) means this process is the only one processing the database's messages (without
   * a coordinator, two processes on one database would not be excluded from each other at all): then a message it
   * received itself is untouched until its first attempt here, which skips the look-up of what an earlier attempt
   * left in the transcript. With a lock shared by instances, another instance may have made that attempt and died.
   */
  lock?: ParticipantLock;
  /**
   * Outages lose nothing: when set, a turn whose model call fails keeps its message pending (later messages of the
   * participant wait behind it), a durable `llm_outage_retry` job retries it with back-off, and the participant gets
   * at most one notice per outage. Without it the engine answers with its "assistant unavailable" fallback.
   */
  outage?: LlmOutageOptions;
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

export function createInboundService(options: InboundServiceOptions): InboundService {
  const { store, clock, newId, log, metrics } = options;
  const lock = options.lock ?? createInProcessLock();
  const outage = options.outage && createLlmOutageHold({ store, clock, newId, log, options: options.outage });
  const resolveSender = createSenderResolution(options);
  const resolvePollAnswer = createPollAnswerResolution({
    store,
    messages: options.messages ?? createBuiltInMessageCatalogue(),
  });
  const { flow, optOut, safety, takeover, answerWhilePaused } = options;
  const processor = createMessageProcessor({
    store,
    flow,
    clock,
    log,
    onlyProcessor: lock.processLocal === true,
    ...(optOut ? { optOut } : {}),
    ...(safety ? { safety } : {}),
    ...(takeover ? { takeover } : {}),
    ...(answerWhilePaused === undefined ? {} : { answerWhilePaused }),
    ...(outage ? { outage } : {}),
  });
  const drains = createParticipantDrains({ store, lock, log, processor });
  let stopping = false;
  const recovery = createRecoverySweep({ store, log, drains, stopping: () => stopping });

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
        processor.received(inbound.id);
        drains.schedule(inbound.participantId, inbound.id);
      }
      return { inboundId: inbound.id, participantId: participant.id, duplicate };
    },
    recoverUnprocessed: recovery.sweep,
    startRecoveryLoop: recovery.startLoop,
    retryHeld(job) {
      const participantId = job.participantId ?? '';
      // The participant lock (every instance), re-entrant so the flow's own turn lock passes: the held messages go
      // first, in arrival order, and no other drain of this participant runs meanwhile.
      const work = lock.run(
        participantId,
        async () => {
          await outage?.retry(job, (id) => drains.drain(id, true));
        },
        { reentrant: true },
      );
      drains.track(work);
      return work;
    },
    idle: drains.idle,
    async stop() {
      stopping = true;
      recovery.stopLoop();
      await drains.idle();
    },
  };
}
