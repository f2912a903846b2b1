/**
 * Exactly once across instances, in arrival order: processing is a drain of the participant's messages still
 * `received`, oldest (`arrival_order`) first, under the participant lock (an advisory lock on PostgreSQL, shared by
 * every instance). Whichever instance received a message, the instance that holds the lock processes it: the receiver
 * asks for the lock and either drains the message itself or finds that the holder already did.
 *
 * The lock is the engine's, taken for the whole drain of a participant's messages (the flow takes it again,
 * re-entrantly, for each turn), so nothing else of this participant runs between two of their messages on any
 * instance. Drains run in the background; `idle` waits for them.
 */
import { errorMessage } from '../domain/errors.ts';
import type { Log } from '../domain/log.ts';
import type { ParticipantLock } from '../store/participant-lock.ts';
import type { Store } from '../store/store.ts';
import type { MessageProcessor, ProcessingOutcome } from './message-processing.ts';

export interface ParticipantDrains {
  /**
   * Processes the participant's `received` messages oldest first, until none is left, or until the model is down:
   * then the first one is held (later ones wait behind it, in order) for the outage retry. The caller holds the lock.
   */
  drain(participantId: string, retrying?: boolean): Promise<ProcessingOutcome>;
  /** A drain in the background, under the lock, for a message just received (`until`: see `drain` in the source). */
  schedule(participantId: string, until?: string): void;
  /** For sweeps: only when nobody (here or on another instance) is processing this participant already. */
  scheduleIfIdle(participantId: string): void;
  /** A drain is queued or running here for this participant. */
  isDraining(participantId: string): boolean;
  /** Other work `idle` waits for (the outage retry). */
  track(work: Promise<unknown>): void;
  /** Resolves when nothing is being processed. */
  idle(): Promise<void>;
}

export function createParticipantDrains(options: {
  store: Store;
  lock: ParticipantLock;
  log: Log;
  processor: MessageProcessor;
}): ParticipantDrains {
  const { store, lock, log, processor } = options;
  const inFlight = new Set<Promise<void>>();
  /** Participants with a drain queued or running here: a sweep does not queue another. */
  const draining = new Map<string, number>();

  /**
   * A drain scheduled for a message it has just `received` (`until`) stops once that one is processed: a message
   * received after it scheduled a drain of its own, which comes next, so looking again would find nothing new.
   */
  async function drain(participantId: string, retrying = false, until?: string): Promise<ProcessingOutcome> {
    let previous: string | undefined;
    for (;;) {
      const next = await store.inbound.nextUnprocessed(participantId);
      // The same message twice: it could not even be marked failed (database trouble); the sweep retries later.
      if (!next || next.id === previous) return 'done';
      previous = next.id;
      if ((await processor.process(next, retrying)) === 'llm_down') return 'llm_down';
      if (next.id === until) return 'done';
    }
  }

  function trackWork(work: Promise<void>): void {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  }

  function trackDrain(participantId: string, work: Promise<unknown>): void {
    draining.set(participantId, (draining.get(participantId) ?? 0) + 1);
    const done = work.then(
      () => undefined,
      (error: unknown) => {
        log.error({ participantId, error: errorMessage(error) }, 'processing inbound messages failed; will retry');
      },
    );
    trackWork(done);
    void done.finally(() => {
      const count = (draining.get(participantId) ?? 1) - 1;
      if (count <= 0) draining.delete(participantId);
      else draining.set(participantId, count);
    });
  }

  return {
    drain: (participantId, retrying) => drain(participantId, retrying),
    schedule(participantId, until) {
      trackDrain(
        participantId,
        lock.run(participantId, () => drain(participantId, false, until), { reentrant: true }),
      );
    },
    scheduleIfIdle(participantId) {
      if (draining.has(participantId)) return;
      if (!lock.tryRun) {
        this.schedule(participantId);
        return;
      }
      trackDrain(
        participantId,
        lock.tryRun(participantId, () => drain(participantId), { reentrant: true }),
      );
    },
    isDraining: (participantId) => draining.has(participantId),
    track(work) {
      trackWork(
        work.then(
          () => undefined,
          () => undefined,
        ),
      );
    },
    async idle() {
      // Processing one message can schedule nothing new, but recovery may add while we wait: loop until empty.
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
