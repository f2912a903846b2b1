/**
 * The common shape of every timer handler: re-check the preconditions that hold for all timers, let the timer
 * decide and write in one unit of work, then send what it decided (see `deferred-sends.ts` for why after). A decision
 * writes through the timers' store (`TimerDependencies.store`), which joins that unit of work.
 */
import type { DataKey, StateData } from '../../domain/data-keys.ts';
import { type Participant, ParticipantStatus } from '../../domain/participant.ts';
import { readData, writeData } from '../../domain/participant-data.ts';
import type { Job, StoreRepositories } from '../../store/store.ts';
import { type DeferredSend, sendDeferred } from './deferred-sends.ts';
import type { TimerDependencies } from './timer-dependencies.ts';

export interface TimerJobContext {
  job: Job;
  participant: Participant;
  /** The state data as read at the start of the transaction. */
  data: StateData;
  now: Date;
}

/**
 * Writes the timer's effects through the timers' store, in the unit of work `runTimerJob` opened, and returns the
 * messages to send once they are committed.
 */
export type TimerDecision = (context: TimerJobContext) => Promise<DeferredSend[]>;

/**
 * Records why a due timer did nothing visible (participant paused, idle…), for the audit trail, through the timers'
 * store (in the timer's unit of work).
 */
export async function recordTimerSkipped(
  store: Pick<StoreRepositories, 'events'>,
  context: Pick<TimerJobContext, 'job' | 'now'> & { participantId: string },
  reason: string,
): Promise<void> {
  await store.events.record({
    participantId: context.participantId,
    type: 'timer-skipped',
    data: { kind: context.job.kind, job_id: context.job.id, reason },
    createdAt: context.now,
  });
}

/**
 * Runs one timer job. Skips, without calling `decide`:
 * - a job whose participant is gone or not active (paused, completed, withdrawn): no proactive message for them;
 * - a stale job: its timer-id data key (`timerIdKey`, for timers that have one) no longer names this job, because
 *   a reply, a transition or a newer timer replaced or cancelled it after the runner had already claimed it. Only
 *   the current timer may act.
 */
export async function runTimerJob(
  dependencies: Pick<TimerDependencies, 'store' | 'clock' | 'messenger' | 'log'>,
  job: Job,
  timerIdKey: DataKey | undefined,
  decide: TimerDecision,
): Promise<void> {
  const { store, clock, messenger, log } = dependencies;
  const participantId = job.participantId;
  if (participantId === undefined) {
    log.warn({ job_id: job.id, kind: job.kind }, 'timer job without a participant ignored');
    return;
  }
  const sends = await store.transaction(async (): Promise<DeferredSend[]> => {
    const now = clock.now();
    const participant = await store.participants.get(participantId);
    if (!participant) {
      log.info(
        { job_id: job.id, kind: job.kind, participant_id: participantId },
        'timer for a deleted participant ignored',
      );
      return [];
    }
    const data = await readData(store, participantId);
    if (timerIdKey !== undefined && data[timerIdKey] !== job.id) {
      log.debug({ job_id: job.id, kind: job.kind, participant_id: participantId }, 'stale timer ignored');
      return [];
    }
    if (participant.status !== ParticipantStatus.ACTIVE) {
      if (timerIdKey !== undefined) await writeData(store, participantId, { [timerIdKey]: '' }, now);
      await recordTimerSkipped(store, { job, now, participantId }, `participant-${participant.status}`);
      return [];
    }
    return decide({ job, participant, data, now });
  });
  await sendDeferred(messenger, sends);
}
