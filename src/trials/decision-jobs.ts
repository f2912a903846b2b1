/**
 * Decision points as durable jobs. Each participant has one pending `decision_point` job per decision point (dedup
 * key), armed at enrollment and re-armed by each run for the next moment. A run decides in ONE transaction: the
 * decision row (its primary key is the moment, so a re-run after a SIGKILL, a retry or another instance decides
 * nothing twice), the option's message through the outbox, the proximal outcome's job and the next moment's job.
 *
 * The jobs carry no participant id on purpose: pausing or withdrawing cancels a participant's jobs, but a decision
 * point still produces its row on those days ("unavailable: paused"). Nothing is ever sent to a participant who is
 * not active, whatever the design's availability rules say.
 */
import { DataKey } from '../domain/data-keys.ts';
import type { NewId } from '../domain/ids.ts';
import { type Participant, ParticipantStatus } from '../domain/participant.ts';
import type { Messenger } from '../engine/messenger.ts';
import { readData } from '../engine/participant-data.ts';
import type { Clock } from '../scheduling/clock.ts';
import type { JobHandler } from '../scheduling/job-runner.ts';
import { localDateOf } from '../scheduling/schedule-time.ts';
import type { Decision } from '../store/decisions.ts';
import type { Job, Store, StoreRepositories } from '../store/store.ts';
import { drawOption, inQuietHours, type Moment, momentOf, nextMoment, probabilitiesFor } from './decision-moments.ts';
import type { DecisionPoint } from './study-design.ts';
import type { StudyInForce } from './study-design-file.ts';

export const DECISION_POINT_JOB = 'decision_point';
export const DECISION_OUTCOME_JOB = 'decision_outcome';

const zoneOf = (participant: Pick<Participant, 'timezone'>): string => participant.timezone || 'UTC';

function decisionJobKey(participantId: string, pointId: string): string {
  return `decision:${participantId}:${pointId}`;
}

/** Enqueues the participant's next moment of every decision point (enrollment; each run arms its own next). */
export async function armDecisionPoints(
  tx: Pick<StoreRepositories, 'jobs'>,
  study: StudyInForce,
  request: { participant: Pick<Participant, 'id' | 'timezone'>; now: Date; newId: NewId; points?: DecisionPoint[] },
): Promise<number> {
  let armed = 0;
  for (const point of request.points ?? study.design.decision_points) {
    const moment = nextMoment(study.design, point, request.participant.id, zoneOf(request.participant), request.now);
    if (!moment) continue;
    await tx.jobs.enqueue(
      {
        id: request.newId('job'),
        kind: DECISION_POINT_JOB,
        runAt: moment.intendedAt,
        dedupKey: decisionJobKey(request.participant.id, point.id),
        payload: {
          participant_id: request.participant.id,
          decision_point_id: point.id,
          local_date: moment.localDate,
          slot: moment.slot,
        },
      },
      request.now,
    );
    armed += 1;
  }
  return armed;
}

/** Why the participant is not available at this moment, or null. */
async function unavailableReason(
  tx: StoreRepositories,
  point: DecisionPoint,
  participant: Participant,
  moment: Moment,
): Promise<string | null> {
  // Never sent to someone who is not active, even when the design does not list it.
  if (participant.status === ParticipantStatus.PAUSED) return 'paused';
  if (participant.status !== ParticipantStatus.ACTIVE) return 'withdrawn';
  const rules = new Set(point.unavailable_when);
  if (rules.has('quiet_hours') && point.quiet_hours && inQuietHours(moment.minuteOfDay, point.quiet_hours)) {
    return 'quiet_hours';
  }
  const data = await readData(tx, participant.id);
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

/** Rolls the decision's transaction back when another run decided the same moment first. */
class AlreadyDecided extends Error {}

export function createDecisionPointHandler(options: {
  store: Store;
  clock: Clock;
  messenger: Messenger;
  newId: NewId;
  study: StudyInForce;
  onJobEnqueued?: () => void;
}): JobHandler {
  const { store, clock, messenger, newId, study } = options;
  const { design } = study;
  return async (job: Job) => {
    const participantId = String(job.payload['participant_id'] ?? '');
    const point = design.decision_points.find((candidate) => candidate.id === job.payload['decision_point_id']);
    const participant = await store.participants.get(participantId);
    // Unregistered, or a point the design no longer has: the chain ends.
    if (!participant || !point) return;
    const moment = momentOf(
      design,
      point,
      participantId,
      zoneOf(participant),
      String(job.payload['local_date']),
      Number(job.payload['slot']),
    );
    if (!moment) return;
    const id = [design.study.id, participantId, point.id, moment.localDate, moment.slot].join('|');
    try {
      await store.transaction(async (tx) => {
        if (await tx.decisions.get(id)) throw new AlreadyDecided();
        const now = clock.now();
        const armId = (await tx.allocations.get(participantId))?.armId ?? '';
        const probabilities = probabilitiesFor(point, armId);
        const reason = await unavailableReason(tx, point, participant, moment);
        const drawn = reason === null ? drawOption(design, point, participantId, moment, probabilities) : undefined;
        const texts = drawn ? point.messages[drawn.option] : undefined;
        const text = texts ? (texts[participant.language ?? 'en'] ?? texts['en']) : undefined;
        const sent = text
          ? await messenger.send(participantId, { type: 'text', text }, { kind: 'proactive', module: 'trial' }, tx)
          : undefined;
        const decision: Decision = {
          id,
          participantId,
          studyId: design.study.id,
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
        if (!(await tx.decisions.decide(decision))) throw new AlreadyDecided();
        if (point.proximal_outcome && reason === null) {
          await tx.jobs.enqueue(
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
        await armDecisionPoints(tx, study, { participant, now: moment.intendedAt, newId, points: [point] });
      });
    } catch (error) {
      if (!(error instanceof AlreadyDecided)) throw error;
      // Decided by an earlier run that committed: only make sure the chain goes on.
      await store.transaction((tx) =>
        armDecisionPoints(tx, study, { participant, now: moment.intendedAt, newId, points: [point] }),
      );
    }
    options.onJobEnqueued?.();
  };
}

/** Fills the proximal outcome: whether the participant replied (or answered Done) within the design's hours. */
export function createDecisionOutcomeHandler(options: { store: Store; clock: Clock; study: StudyInForce }): JobHandler {
  const { store, clock, study } = options;
  return async (job: Job) => {
    const decision = await store.decisions.get(String(job.payload['decision_id'] ?? ''));
    if (!decision || decision.outcome) return;
    const point = study.design.decision_points.find((candidate) => candidate.id === decision.decisionPointId);
    const rule = point?.proximal_outcome;
    if (!rule) return;
    const from = decision.sentAt ?? decision.decidedAt;
    const until = new Date(from.getTime() + rule.hours * 3_600_000);
    const within = (at: Date) => at > from && at <= until;
    let outcome: Record<string, unknown>;
    if (rule.type === 'replied_within') {
      const entries = await store.transcript.list(decision.participantId, { limit: 500 });
      const reply = entries.find((entry) => entry.role === 'user' && within(entry.createdAt));
      outcome = {
        type: rule.type,
        hours: rule.hours,
        replied: reply !== undefined,
        first_reply_at: reply?.createdAt.toISOString() ?? null,
      };
    } else {
      const answers = await store.events.list({ participantId: decision.participantId, type: 'poll-answered' });
      const done = answers.find((event) => event.data['kind'] === 'success-counted' && within(event.createdAt));
      outcome = {
        type: rule.type,
        hours: rule.hours,
        done: done !== undefined,
        done_at: done?.createdAt.toISOString() ?? null,
      };
    }
    await store.decisions.recordOutcome(decision.id, outcome, clock.now());
  };
}
