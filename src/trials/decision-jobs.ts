/**
 * Decision points as durable jobs. Each participant has one pending `decision_point` job per decision point at local
 * times (dedup key), armed at enrollment and re-armed by each run for the next moment, in the transaction that
 * decides (`decide-moment.ts`). Points at the daily prompt time ride on the `daily_prompt` job instead.
 *
 * The jobs carry no participant id on purpose: pausing or withdrawing cancels a participant's jobs, but a decision
 * point still produces its row on those days ("unavailable: paused"). Nothing is ever sent to a participant who is
 * not active, whatever the design's availability rules say.
 *
 * A job run more than `MISSED_PROMPT_GRACE` after its moment (the jittered time it was due: the server was down)
 * records the moment as `missed_moment`, nothing drawn or sent, and arms the next one; after a long outage the chain
 * walks every moment it missed, one row each, up to the first one still ahead.
 */

import type { Clock } from '../domain/clock.ts';
import type { NewId } from '../domain/ids.ts';
import type { Participant } from '../domain/participant.ts';
import { type DailyPromptPayload, parseDailyPromptPayload } from '../scheduling/daily-prompt-jobs.ts';
import type { JobHandler } from '../scheduling/job-runner.ts';
import { readSchedules } from '../scheduling/schedule-registry.ts';
import type { Job, Store, StoreRepositories } from '../store/store.ts';
import { type DecideDependencies, decideMoment, zoneOf } from './decide-moment.ts';
import { dailyPromptMoment, momentOf, nextMoment } from './decision-moments.ts';
import type { DecisionPoint } from './study-design.ts';
import type { StudyInForce } from './study-design-file.ts';

export { DECISION_OUTCOME_JOB } from './decide-moment.ts';
export const DECISION_POINT_JOB = 'decision_point';

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

/** Runs a `decision_point` job: decides its moment and arms the point's next one, in the same transaction. */
export function createDecisionPointHandler(options: DecideDependencies & { onJobEnqueued?: () => void }): JobHandler {
  const { store, newId, study } = options;
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
    await decideMoment(options, {
      point,
      participant,
      moment,
      also: () => armDecisionPoints(store, study, { participant, now: moment.intendedAt, newId, points: [point] }),
    });
    options.onJobEnqueued?.();
  };
}

/**
 * Decision points at the daily prompt time: decided when the participant's `daily_prompt` job runs, before the prompt
 * (so an option's message follows the decision, and an `answered_today` rule sees the day before this prompt), then
 * the daily prompt handler runs as without a design. The day's decision row is keyed by the prompt's local date, so
 * a retried prompt job decides nothing twice. A participant with no daily prompt due (paused, withdrawn, before the
 * schedule is set) has no daily prompt time, so no decision point that day. A job that is no longer its schedule's
 * timer (the schedule changed or was removed meanwhile) decides nothing: its moment no longer exists, and the job for
 * the new time decides instead. A job run more than the grace after it was due (the handler skips that day's prompt)
 * records its moment as `missed_moment`: lateness is measured from the job's due time, as the handler measures it.
 */
export function withDailyPromptDecisions(inner: JobHandler, options: DecideDependencies): JobHandler {
  const points = options.study.design.decision_points.filter((point) => point.moment.type === 'daily_prompt');
  if (points.length === 0) return inner;
  return async (job: Job) => {
    const participant = job.participantId ? await options.store.participants.get(job.participantId) : undefined;
    const payload = parseDailyPromptPayload(job.payload);
    if (participant && payload && (await isScheduleTimer(options.store, participant.id, payload, job))) {
      const moment = dailyPromptMoment(payload.local_date, new Date(payload.target_at), zoneOf(participant));
      const dueAt = new Date(payload.fire_at);
      for (const point of points) await decideMoment(options, { point, participant, moment, dueAt });
    }
    return inner(job);
  };
}

/** Whether the job is still its schedule's current timer (as the daily prompt handler checks before prompting). */
async function isScheduleTimer(store: Store, participantId: string, payload: DailyPromptPayload, job: Job) {
  const schedules = await readSchedules(store, participantId);
  return schedules.some((schedule) => schedule.id === payload.schedule_id && schedule.timer_id === job.id);
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
