/**
 * Model outages lose nothing and are announced once. When a participant's turn fails on the model, their messages stay
 * pending ("held"), a durable `llm_outage_retry` job retries them in arrival order with back-off, and the failure that
 * starts the outage sends the one notice.
 *
 * The outage is a row of `llm_outages`, one per participant, from the failure that starts it until a turn of theirs
 * is answered again (in the answer's transaction). Nothing else ends it: not the retry job finishing nor giving up,
 * since the model may still be down. Starting it is an insert that only one caller can win, and the notice commits in
 * that insert's transaction, so every interleaving sends it once: a later message failing while the retry job is
 * claimed (no longer pending) and waits for the participant's lock, two instances on one database, a crash between
 * the two writes. The retry job is only how held messages come back.
 *
 * A held message has a `lastError` (what keeps it pending) from its first hold on: the `held` metric counts messages,
 * not attempts; a held message answered later counts as `recovered`, one given up as `failed`.
 */

import type { Clock } from '../domain/clock.ts';
import type { NewId } from '../domain/ids.ts';
import type { Log } from '../domain/log.ts';
import type { Participant } from '../domain/participant.ts';
import type { Messenger } from '../engine/messenger.ts';
import type { InboundMessage, Job, Store } from '../store/store.ts';
import { unansweredMessageEntry } from './inbound-transcript.ts';

export interface LlmOutageOptions {
  messenger: Pick<Messenger, 'send'>;
  /** `LLM_OUTAGE_RETRY_FOR`: how long after the first failure the message is retried. */
  retryForMs: number;
  /** The notice for this participant (`LLM_OUTAGE_NOTICE`, else the catalogue in their language); '' sends none. */
  notice: (participant: Participant) => string;
  /** Wakes the job runner after a retry is enqueued. */
  notify?: () => void;
  /** Metrics: a message held (once, however many attempts), answered after an outage, or given up. */
  onOutage?: (outcome: 'held' | 'recovered' | 'failed') => void;
}

export const LLM_OUTAGE_RETRY_JOB = 'llm_outage_retry';
export const llmOutageDedupKey = (participantId: string): string => `${LLM_OUTAGE_RETRY_JOB}:${participantId}`;
/** 30 s, 60 s, 120 s, 240 s, then every 5 minutes. */
export function llmOutageBackoff(attempt: number): number {
  return Math.min(30_000 * 2 ** Math.max(0, attempt - 1), 5 * 60_000);
}

/** What the inbound pipeline calls; everything runs under the participant's lock. */
export interface LlmOutageHold {
  /**
   * A turn failed on the model: holds the participant's pending messages, starts their outage (and sends the notice)
   * unless one is in progress, and makes sure a retry is coming. `retrying`: called from the retry job, which
   * schedules its own next attempt.
   */
  hold(inbound: InboundMessage, participant: Participant, error: string, retrying: boolean): Promise<void>;
  /**
   * In the unit of work that marks `inbound` processed after its turn was answered (it joins it): the outage, if any,
   * is over.
   */
  answered(inbound: InboundMessage): Promise<void>;
  /**
   * The `llm_outage_retry` job: `drain` processes the held messages in arrival order; while the model is still down,
   * the next attempt (back-off), and past `LLM_OUTAGE_RETRY_FOR` the held messages fail.
   */
  retry(job: Job, drain: (participantId: string) => Promise<'done' | 'llm_down'>): Promise<void>;
}

export function createLlmOutageHold(dependencies: {
  store: Store;
  clock: Clock;
  newId: NewId;
  log: Log;
  options: LlmOutageOptions;
}): LlmOutageHold {
  const { store, clock, newId, log, options } = dependencies;

  /** Through the hold's store: inside a unit of work (the one that holds the messages) it joins it. */
  async function enqueueRetry(participantId: string, since: Date, attempt: number): Promise<void> {
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
  }

  function count(outcome: 'held' | 'recovered' | 'failed', times = 1): void {
    for (let index = 0; index < times; index += 1) options.onOutage?.(outcome);
  }

  /** Past `LLM_OUTAGE_RETRY_FOR`: every held message fails, visibly (transcript, event, status). */
  async function giveUp(participantId: string, since: Date, attempts: number): Promise<void> {
    // Only held ones: a message that arrived after the last failed attempt has its own retry window ahead of it.
    const held = (await store.inbound.listUnprocessed(participantId)).filter((inbound) => inbound.lastError);
    for (const inbound of held) {
      const now = clock.now();
      const error = `the model was unavailable from ${since.toISOString()} for longer than the retry limit`;
      const linked = await store.transcript.forSourceMessage(participantId, inbound.id);
      await store.transaction(async () => {
        if (!linked.some((entry) => entry.role === 'user'))
          await store.transcript.append([unansweredMessageEntry(inbound)]);
        await store.events.record({
          participantId,
          type: 'message-failed',
          data: { reason: 'llm_outage', since: since.toISOString(), attempts, error },
          sourceMessageId: inbound.id,
          createdAt: now,
        });
        await store.inbound.markFailed(inbound.id, error, now);
      });
      count('failed');
      log.error({ inboundId: inbound.id, participantId, since: since.toISOString() }, 'model outage: message failed');
    }
  }

  return {
    async hold(inbound, participant, error, retrying) {
      const { participantId } = inbound;
      const now = clock.now();
      const notice = options.notice(participant);
      const { held, started, enqueued } = await store.transaction(async () => {
        const newlyHeld = await store.inbound.hold(participantId, `the model is unavailable: ${error}`);
        const begun = await store.llmOutages.begin({ participantId, startedAt: now, sourceMessageId: inbound.id });
        if (begun) {
          await store.events.record({
            participantId,
            type: 'llm-outage',
            data: { error, retry_for_ms: options.retryForMs },
            sourceMessageId: inbound.id,
            createdAt: now,
          });
          if (notice) {
            await options.messenger.send(
              participantId,
              { type: 'text', text: notice },
              { kind: 'notice', sourceMessageId: inbound.id },
            );
          }
        }
        // A job claimed and waiting for the lock is not pending: the one enqueued here is then replaced by its next
        // attempt, or finds nothing left to do. Without it, a job that finished just before would leave nobody.
        const missing = !retrying && !(await store.jobs.getPendingByKey(llmOutageDedupKey(participantId)));
        if (missing) await enqueueRetry(participantId, now, 1);
        return { held: newlyHeld, started: begun, enqueued: missing };
      });
      count('held', held);
      if (enqueued) options.notify?.();
      if (started) log.warn({ inboundId: inbound.id, participantId, error }, 'model unavailable: outage begins');
      else log.info({ inboundId: inbound.id, participantId, error }, 'model still unavailable: message held');
    },

    answered(inbound) {
      const { participantId } = inbound;
      return store.transaction(async () => {
        if (await store.llmOutages.end(participantId)) {
          const now = clock.now();
          // Its messages are being answered: the retry waiting for them has nothing left to do.
          await store.jobs.cancelByKey(llmOutageDedupKey(participantId), now);
          await store.events.record({
            participantId,
            type: 'llm-outage-ended',
            data: {},
            sourceMessageId: inbound.id,
            createdAt: now,
          });
        }
        if (inbound.lastError) store.afterCommit(() => count('recovered'));
      });
    },

    async retry(job, drain) {
      const participantId = job.participantId;
      if (!participantId) return;
      const sinceText = typeof job.payload['since'] === 'string' ? job.payload['since'] : undefined;
      const jobSince = sinceText ? new Date(sinceText) : clock.now();
      const attempt = typeof job.payload['attempt'] === 'number' ? job.payload['attempt'] : 1;
      if ((await drain(participantId)) === 'done') return;
      // A turn answered while this job waited ended the outage it was retrying; the messages held now belong to the
      // outage that began after it, and their time runs from its start.
      const outage = await store.llmOutages.get(participantId);
      const since = outage && outage.startedAt > jobSince ? outage.startedAt : jobSince;
      if (clock.now().getTime() - since.getTime() >= options.retryForMs) {
        await giveUp(participantId, since, attempt + 1);
        return;
      }
      await enqueueRetry(participantId, since, attempt + 1);
      options.notify?.();
    },
  };
}
