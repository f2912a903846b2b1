/**
 * Deciding one moment of one decision point for one participant, in ONE transaction: the decision row (its primary
 * key is the moment, so a re-run after a SIGKILL, a retry or another instance decides nothing twice), the option's
 * message through the outbox, the proximal outcome's job, and whatever the caller adds (the next moment's job).
 * Nothing is ever sent to a participant who is not active, whatever the design's availability rules say, nor for a
 * moment decided more than the grace after it was due (`missed_moment`).
 */

import type { Clock } from '../domain/clock.ts';
import { DataKey } from '../domain/data-keys.ts';
import type { NewId } from '../domain/ids.ts';
import { type Participant, ParticipantStatus } from '../domain/participant.ts';
import { readData } from '../domain/participant-data.ts';
import type { Messenger } from '../engine/messenger.ts';
import { localDateOf } from '../scheduling/schedule-time.ts';
import type { Decision } from '../store/decisions.ts';
import type { Store } from '../store/store.ts';
import { drawOption, inQuietHours, type Moment, probabilitiesFor } from './decision-moments.ts';
import { randomisationPauseOf } from './randomisation-pause.ts';
import type { DecisionPoint } from './study-design.ts';
import type { StudyInForce } from './study-design-file.ts';

export const DECISION_OUTCOME_JOB = 'decision_outcome';

export const zoneOf = (participant: Pick<Participant, 'timezone'>): string => participant.timezone || 'UTC';

export interface DecideDependencies {
  store: Store;
  clock: Clock;
  messenger: Messenger;
  newId: NewId;
  study: StudyInForce;
  /**
   * `MISSED_PROMPT_GRACE`: a moment whose job runs more than this after it was due (the server was down) is missed,
   * recorded unavailable (`missed_moment`) with nothing drawn or sent, like the daily prompt it may ride on.
   */
  missedPromptGraceMs: number;
}

/** Why the participant is not available at this moment, or null. */
async function unavailableReason(
  dependencies: DecideDependencies,
  request: { point: DecisionPoint; participant: Participant; moment: Moment; dueAt?: Date },
): Promise<string | null> {
  const { store, study, clock, missedPromptGraceMs } = dependencies;
  const { point, participant, moment } = request;
  // First: decided late, the participant's state now says nothing about their state at the moment.
  const dueAt = request.dueAt ?? moment.intendedAt;
  if (clock.now().getTime() - dueAt.getTime() > missedPromptGraceMs) return 'missed_moment';
  // A staff pause holds every draw, whatever the participant's state: the reason says why nothing was drawn.
  if ((await randomisationPauseOf(store, study.design.study.id)).paused) return 'randomisation_paused';
  if (participant.status === ParticipantStatus.PAUSED) return 'paused';
  if (participant.status !== ParticipantStatus.ACTIVE) return 'withdrawn';
  const rules = new Set(point.unavailable_when);
  if (rules.has('quiet_hours') && point.quiet_hours && inQuietHours(moment.minuteOfDay, point.quiet_hours)) {
    return 'quiet_hours';
  }
  const data = await readData(store, participant.id);
  if (rules.has('idle') && data[DataKey.engagementState] === 'idle') return 'idle';
  const responded = data[DataKey.dailyPromptRespondedAt];
  if (
    rules.has('answered_today') &&
    responded &&
    localDateOf(new Date(responded), zoneOf(participant)) === moment.localDate
  ) {
    return 'answered_today';
  }
  return null;
}

export function decisionId(study: StudyInForce, participantId: string, pointId: string, moment: Moment): string {
  return [study.design.study.id, participantId, pointId, moment.localDate, moment.slot].join('|');
}

/**
 * Decides the moment unless it is decided already; `also` runs in the same transaction either way (in its own when
 * the moment was decided before): it writes through the store it closes over, which joins that unit of work. True
 * when this call decided it.
 */
export async function decideMoment(
  dependencies: DecideDependencies,
  request: {
    point: DecisionPoint;
    participant: Participant;
    moment: Moment;
    /** When the moment's job was due, lateness measured from it; the moment's intended time by default. */
    dueAt?: Date;
    also?: () => Promise<unknown>;
  },
): Promise<boolean> {
  const { store, clock, messenger, newId, study } = dependencies;
  const { point, participant, moment } = request;
  const id = decisionId(study, participant.id, point.id, moment);
  try {
    await store.transaction(async () => {
      if (await store.decisions.get(id)) throw new AlreadyDecided();
      const now = clock.now();
      const armId = (await store.allocations.get(participant.id))?.armId ?? '';
      const probabilities = probabilitiesFor(point, armId);
      const reason = await unavailableReason(dependencies, request);
      const drawn =
        reason === null ? drawOption(study.design, point, participant.id, moment, probabilities) : undefined;
      const texts = drawn ? point.messages[drawn.option] : undefined;
      const text = texts ? (texts[participant.language ?? 'en'] ?? texts['en']) : undefined;
      const sent = text
        ? await messenger.send(participant.id, { type: 'text', text }, { kind: 'proactive', module: 'trial' })
        : undefined;
      const decision: Decision = {
        id,
        participantId: participant.id,
        studyId: study.design.study.id,
        armId,
        decisionPointId: point.id,
        localDate: moment.localDate,
        slot: moment.slot,
        intendedAt: moment.intendedAt,
        intendedLocal: moment.intendedLocal,
        available: reason === null,
        unavailableReason: reason,
        probabilities,
        option: drawn?.option ?? null,
        draw: drawn?.draw ?? null,
        designHash: study.hash,
        decidedAt: now,
        sentOutboundId: sent?.id ?? null,
        sentAt: sent ? now : null,
        outcome: null,
        outcomeAt: null,
      };
      if (!(await store.decisions.decide(decision))) throw new AlreadyDecided();
      if (point.proximal_outcome && reason === null) {
        await store.jobs.enqueue(
          {
            id: newId('job'),
            kind: DECISION_OUTCOME_JOB,
            runAt: new Date(now.getTime() + point.proximal_outcome.hours * 3_600_000),
            dedupKey: `decision-outcome:${id}`,
            payload: { decision_id: id },
          },
          now,
        );
      }
      await request.also?.();
    });
    return true;
  } catch (error) {
    if (!(error instanceof AlreadyDecided)) throw error;
    // Decided by an earlier run that committed: only make sure what goes with it (the chain) is there.
    if (request.also) await store.transaction(request.also);
    return false;
  }
}

/** Rolls the decision's transaction back when another run decided the same moment first. */
class AlreadyDecided extends Error {}
