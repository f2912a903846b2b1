/**
 * A staff pause of randomisation: while paused, every decision point still produces its one decision row, recorded
 * as unavailable (`randomisation_paused`), and nothing is drawn or sent. Allocation at enrollment goes on: a trial
 * keeps enrolling into its arms while the micro-randomisation is held (a faulty message, an ethics query).
 *
 * The state is the latest `randomisation-pause-changed` event of the study (who, when, why), so it is shared by
 * every instance and its history is the audit of the pauses.
 */

import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import type { Store, StoreRepositories } from '../store/store.ts';

export const RANDOMISATION_PAUSE_EVENT = 'randomisation-pause-changed';

export interface RandomisationPause {
  paused: boolean;
  /** The last change: when, by whom and why; absent when never paused. */
  changedAt?: Date;
  by?: string;
  reason?: string;
}

export async function randomisationPauseOf(
  repositories: Pick<StoreRepositories, 'events'>,
  studyId: string,
): Promise<RandomisationPause> {
  const changes = await repositories.events.list({ type: RANDOMISATION_PAUSE_EVENT });
  const last = changes.filter((event) => event.data['study_id'] === studyId).at(-1);
  if (!last) return { paused: false };
  return {
    paused: last.data['paused'] === true,
    changedAt: last.createdAt,
    by: String(last.data['by'] ?? ''),
    reason: String(last.data['reason'] ?? ''),
  };
}

/** Pauses or resumes; refuses an empty reason and a change to the state already in force (both change nothing). */
export async function changeRandomisationPause(
  options: { store: Store; clock: Clock; studyId: string },
  change: { paused: boolean; reason: string; by: string },
): Promise<RandomisationPause> {
  const reason = change.reason.trim();
  if (!reason) throw new AppError('invalid_input', 'reason must not be empty: a pause of randomisation is audited');
  return options.store.transaction(async (tx) => {
    const current = await randomisationPauseOf(tx, options.studyId);
    if (current.paused === change.paused) {
      throw new AppError('conflict', `randomisation is already ${change.paused ? 'paused' : 'running'}`);
    }
    const now = options.clock.now();
    await tx.events.record({
      type: RANDOMISATION_PAUSE_EVENT,
      data: { study_id: options.studyId, paused: change.paused, reason, by: change.by },
      createdAt: now,
    });
    return { paused: change.paused, changedAt: now, by: change.by, reason };
  });
}
