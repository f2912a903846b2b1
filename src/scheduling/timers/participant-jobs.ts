/**
 * Lifecycle: pausing, completing, withdrawing or deleting a participant cancels every pending job they have
 * (timers, daily prompts, undelivered messages), so a non-active participant gets no proactive message.
 */
import { DataKey, type StateData } from '../../domain/data-keys.ts';
import { writeData } from '../../domain/participant-data.ts';
import type { StoreRepositories } from '../../store/store.ts';
import { TIMER_ID_DATA_KEY } from './timer-jobs.ts';

/**
 * Cancels every pending job of the participant and clears the timer ids and the pending daily prompt that named
 * them, through the store it is given, in the caller's unit of work (the one that changes the status, or before the
 * delete). Returns how many
 * jobs were cancelled. A participant without a flow state (already deleted: it cascades) only has jobs cancelled,
 * since writing data would create a flow state again.
 */
export async function cancelAllParticipantJobs(
  store: StoreRepositories,
  participantId: string,
  now: Date,
): Promise<number> {
  const cancelled = await store.jobs.cancelForParticipant(participantId, now);
  if (await store.flowStates.get(participantId)) {
    const cleared: StateData = { [DataKey.dailyPromptPending]: '' };
    for (const key of Object.values(TIMER_ID_DATA_KEY)) cleared[key] = '';
    await writeData(store, participantId, cleared, now);
  }
  return cancelled;
}
