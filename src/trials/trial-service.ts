/**
 * The trial as staff see and steer it: the design in force, the allocation report, the one way an arm changes after
 * enrollment — an explicit staff override with a reason, recorded as an event (who, when, why, from, to) — and the
 * pause of randomisation at decision points (`randomisation-pause.ts`).
 */

import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import type { Allocation, BlockStateRow } from '../store/allocations.ts';
import type { Decision } from '../store/decisions.ts';
import type { Store } from '../store/store.ts';
import { changeRandomisationPause, type RandomisationPause, randomisationPauseOf } from './randomisation-pause.ts';
import type { StudyInForce } from './study-design-file.ts';

export interface AllocationReport {
  studyId: string;
  designHash: string;
  total: number;
  /** Allocations by arm in force (overrides counted where they put the participant) and as drawn. */
  arms: { armId: string; label: string; inForce: number; drawn: number }[];
  strata: { stratum: string; counts: Record<string, number>; block: BlockStateRow | undefined }[];
  overrides: number;
}

export interface TrialService {
  /** Undefined without `STUDY_DESIGN_FILE`. */
  readonly study: StudyInForce | undefined;
  overrideArm(participantId: string, change: { armId: string; reason: string; by: string }): Promise<Allocation>;
  report(): Promise<AllocationReport | undefined>;
  /** A participant's decision point decisions, oldest first; not found for an id never enrolled nor decided. */
  decisions(participantId: string): Promise<Decision[]>;
  /** Whether decision points are held by staff (undefined without a design). */
  randomisation(): Promise<RandomisationPause | undefined>;
  /** Pauses (`paused: true`) or resumes the draws at decision points; audited with who and why. */
  changeRandomisation(change: { paused: boolean; reason: string; by: string }): Promise<RandomisationPause>;
}

export function createTrialService(options: {
  store: Store;
  clock: Clock;
  study: StudyInForce | undefined;
}): TrialService {
  const { store, clock, study } = options;

  async function overrideArm(
    participantId: string,
    change: { armId: string; reason: string; by: string },
  ): Promise<Allocation> {
    if (!study)
      throw new AppError('invalid_input', 'no study design is loaded (STUDY_DESIGN_FILE), so there are no arms');
    const reason = change.reason.trim();
    if (!reason) throw new AppError('invalid_input', 'reason must not be empty: an arm override is audited');
    if (!study.design.arms.some((arm) => arm.id === change.armId)) {
      const known = study.design.arms.map((arm) => arm.id).join(', ');
      throw new AppError('invalid_input', `arm "${change.armId}" is not an arm of the study (${known})`);
    }
    const now = clock.now();
    return store.transaction(async (tx) => {
      const before = await tx.allocations.get(participantId);
      if (!before) throw new AppError('not_found', `participant ${participantId} has no allocation`);
      const after = await tx.allocations.override(participantId, {
        armId: change.armId,
        at: now,
        by: change.by,
        reason,
      });
      if (!after) throw new AppError('not_found', `participant ${participantId} has no allocation`);
      await tx.events.record({
        participantId,
        type: 'arm-overridden',
        data: {
          study_id: before.studyId,
          from: before.armId,
          to: change.armId,
          allocated: before.allocatedArmId,
          reason,
          by: change.by,
        },
        createdAt: now,
      });
      return after;
    });
  }

  async function report(): Promise<AllocationReport | undefined> {
    if (!study) return undefined;
    const studyId = study.design.study.id;
    const allocations = await store.allocations.list(studyId);
    const blocks = await store.allocations.blockStates(studyId);
    const strata = new Map<string, Record<string, number>>();
    for (const allocation of allocations) {
      const counts = strata.get(allocation.stratum) ?? {};
      counts[allocation.armId] = (counts[allocation.armId] ?? 0) + 1;
      strata.set(allocation.stratum, counts);
    }
    return {
      studyId,
      designHash: study.hash,
      total: allocations.length,
      arms: study.design.arms.map((arm) => ({
        armId: arm.id,
        label: arm.label,
        inForce: allocations.filter((allocation) => allocation.armId === arm.id).length,
        drawn: allocations.filter((allocation) => allocation.allocatedArmId === arm.id).length,
      })),
      strata: [...strata.entries()]
        .sort(([left], [right]) => left.localeCompare(right))
        .map(([stratum, counts]) => ({ stratum, counts, block: blocks.find((block) => block.stratum === stratum) })),
      overrides: allocations.filter((allocation) => allocation.override !== null).length,
    };
  }

  async function decisions(participantId: string): Promise<Decision[]> {
    const rows = await store.decisions.listForParticipant(participantId);
    if (rows.length === 0 && !(await store.participants.get(participantId))) {
      throw new AppError('not_found', `participant ${participantId} not found`);
    }
    return rows;
  }

  async function randomisation(): Promise<RandomisationPause | undefined> {
    return study ? randomisationPauseOf(store, study.design.study.id) : undefined;
  }

  async function changeRandomisation(change: { paused: boolean; reason: string; by: string }) {
    if (!study) {
      throw new AppError('invalid_input', 'no study design is loaded (STUDY_DESIGN_FILE), so nothing is randomised');
    }
    return changeRandomisationPause({ store, clock, studyId: study.design.study.id }, change);
  }

  return { study, overrideArm, report, decisions, randomisation, changeRandomisation };
}
