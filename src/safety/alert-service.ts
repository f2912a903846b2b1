/**
 * Raising, acknowledging and resolving staff alerts. Raising is part of the caller's transaction: the alert row (the
 * dashboard's route), one durable `alert_delivery` job per other route, the participant's staff review and the event
 * commit together with whatever caused them (the safety message, the tool call), so an alert survives a crash at any
 * point after its cause was recorded, and is delivered at least once.
 */

import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import type { NewId } from '../domain/ids.ts';
import type { Alert, NewAlert } from '../store/safety-records.ts';
import type { Store } from '../store/store.ts';
import { HELD_TURN_JOB } from './held-coach-turn.ts';

export const ALERT_DELIVERY_JOB = 'alert_delivery';
/**
 * A participant's message in a taken-over conversation (takeover-service.ts): a notification for the dashboard, which
 * never holds up the end of a staff review.
 */
export const TAKEOVER_MESSAGE_ALERT = 'takeover-message';
/** Attempts per route before its delivery is recorded as failed (back-off 30 s · 2^n: about a day in all). */
const ALERT_DELIVERY_ATTEMPTS = 12;

export type AlertInput = Omit<NewAlert, 'id' | 'createdAt'> & {
  /** Put the participant under staff review (their proactive messages stop until a person resolves it). */
  review: boolean;
  /** Only the dashboard, no e-mail or webhook: a notification for whoever is at the dashboard already. */
  dashboardOnly?: boolean;
};

/** What ending a review does with a held coach turn: run it (the default) or discard it. */
export type HeldTurnChoice = 'run' | 'discard';

export interface AlertService {
  /** In the caller's unit of work when there is one (the alert commits with its cause). Returns the new alert's id. */
  raise(input: AlertInput): Promise<string>;
  acknowledge(id: string, by: string, note: string | undefined): Promise<Alert>;
  /**
   * Resolving the last unresolved alert of a participant ends their staff review, and releases the coach's turn held
   * meanwhile (`SAFETY_COACH_TURN=hold`) unless `heldTurn` is `discard`.
   */
  resolve(id: string, by: string, note: string, options?: { heldTurn?: HeldTurnChoice }): Promise<Alert>;
}

export function createAlertService(options: {
  store: Store;
  clock: Clock;
  newId: NewId;
  /** The routes besides the dashboard: `email`, `webhook`. */
  routes: readonly string[];
  /** Wakes the job runner once a delivery job is committed. */
  onEnqueued?: () => void;
  /** After an alert is raised, acknowledged or resolved has committed (the dashboard's live unread count). */
  onChange?: () => void;
}): AlertService {
  const { store, clock, newId } = options;
  /** Once the unit of work it is called in commits. */
  const changed = () => store.afterCommit(() => options.onChange?.());

  async function find(id: string): Promise<Alert> {
    const alert = await store.alerts.get(id);
    if (!alert) throw new AppError('not_found', `no alert with id ${id}`);
    return alert;
  }

  /**
   * The held turn's job, committed with the end of the review (the resolving unit of work, which it joins): it runs
   * once, after the commit.
   */
  async function releaseHeldTurn(participantId: string, messageId: string, now: Date): Promise<void> {
    await store.jobs.enqueue(
      {
        id: newId('job'),
        kind: HELD_TURN_JOB,
        participantId,
        runAt: now,
        payload: { sourceMessageId: messageId },
        dedupKey: `${HELD_TURN_JOB}:${messageId}`,
      },
      now,
    );
    store.afterCommit(() => options.onEnqueued?.());
  }

  return {
    raise(input) {
      // Joins the caller's unit of work: the alert commits with whatever caused it.
      return store.transaction(async () => {
        const now = clock.now();
        const id = newId('alert');
        const { review, dashboardOnly, ...fields } = input;
        const routes = dashboardOnly ? [] : options.routes;
        await store.alerts.create({ ...fields, id, createdAt: now }, ['dashboard', ...routes]);
        for (const route of routes) {
          await store.jobs.enqueue(
            {
              id: newId('job'),
              kind: ALERT_DELIVERY_JOB,
              ...(input.participantId ? { participantId: input.participantId } : {}),
              runAt: now,
              payload: { alertId: id, route },
              maxAttempts: ALERT_DELIVERY_ATTEMPTS,
              dedupKey: `${ALERT_DELIVERY_JOB}:${id}:${route}`,
            },
            now,
          );
        }
        if (review && input.participantId) await store.alerts.beginReview(input.participantId, id, now);
        await store.events.record({
          ...(input.participantId ? { participantId: input.participantId } : {}),
          type: 'alert-raised',
          data: { alert_id: id, kind: input.kind, detector: input.detector, rule: input.rule ?? null, review },
          ...(input.sourceMessageId ? { sourceMessageId: input.sourceMessageId } : {}),
          createdAt: now,
        });
        if (routes.length > 0) store.afterCommit(() => options.onEnqueued?.());
        changed();
        return id;
      });
    },

    async acknowledge(id, by, note) {
      const alert = await find(id);
      await store.transaction(async () => {
        const now = clock.now();
        if (!(await store.alerts.acknowledge(id, by, note, now))) {
          throw new AppError('conflict', `alert ${id} is already ${alert.status}`);
        }
        await store.events.record({
          ...(alert.participantId ? { participantId: alert.participantId } : {}),
          type: 'alert-acknowledged',
          data: { alert_id: id, by, note: note ?? null },
          createdAt: now,
        });
        changed();
      });
      return find(id);
    },

    async resolve(id, by, note, resolveOptions) {
      const alert = await find(id);
      await store.transaction(async () => {
        const now = clock.now();
        if (!(await store.alerts.resolve(id, by, note, now))) {
          throw new AppError('conflict', `alert ${id} is already resolved`);
        }
        let reviewEnded = false;
        let heldTurn: 'run' | 'discarded' | null = null;
        if (alert.participantId) {
          const unresolved = (await store.alerts.list({ participantId: alert.participantId, limit: 1000 })).filter(
            (other) => other.status !== 'resolved' && other.id !== id && other.kind !== TAKEOVER_MESSAGE_ALERT,
          );
          if (unresolved.length === 0) {
            const heldMessageId = await store.alerts.heldTurn(alert.participantId);
            reviewEnded = await store.alerts.endReview(alert.participantId);
            if (reviewEnded && heldMessageId) {
              heldTurn = resolveOptions?.heldTurn === 'discard' ? 'discarded' : 'run';
              if (heldTurn === 'run') await releaseHeldTurn(alert.participantId, heldMessageId, now);
            }
          }
        }
        await store.events.record({
          ...(alert.participantId ? { participantId: alert.participantId } : {}),
          type: 'alert-resolved',
          data: { alert_id: id, by, note, review_ended: reviewEnded, held_turn: heldTurn },
          createdAt: now,
        });
        changed();
      });
      return find(id);
    },
  };
}
