/**
 * The storage port of the safety net: staff alerts, their deliveries per route, and participants under staff review.
 *
 * Glossary:
 * - alert: something a person must look at (a risky message, the coach's `flag_for_staff`, an adherence rule, a
 *   taken-over conversation left without a staff reply). `open` → `acknowledged` → `resolved`, each step with who and
 *   a note.
 * - delivery: one alert route (`dashboard`, `email`, `webhook`) of one alert and its outcome. The dashboard route is
 *   the alert row itself, delivered when it commits; the others are `alert_delivery` jobs (at least once, retried).
 * - review: a participant under staff review gets no proactive message until a person clears it.
 * - held turn: with `SAFETY_COACH_TURN=hold`, the coach's turn for a flagged message waits for the end of the
 *   review, then runs once (or is discarded by the staff member who ends it).
 */

export const AlertStatus = { OPEN: 'open', ACKNOWLEDGED: 'acknowledged', RESOLVED: 'resolved' } as const;
export type AlertStatus = (typeof AlertStatus)[keyof typeof AlertStatus];

export interface NewAlert {
  id: string;
  participantId: string | undefined;
  /** `risk` (a detector), `staff-flag` (the coach's tool), `adherence`, `takeover-idle`, `takeover-message`. */
  kind: string;
  /** `keywords`, `model`, `coach`, or the rule that raised it. */
  detector: string;
  /** The matched pattern, the model's label, or the rule's description. */
  rule: string | undefined;
  score: number | undefined;
  urgency: 'normal' | 'urgent';
  reason: string;
  sourceMessageId: string | undefined;
  createdAt: Date;
}

export interface Alert extends NewAlert {
  status: AlertStatus;
  acknowledgedAt: Date | undefined;
  acknowledgedBy: string | undefined;
  acknowledgeNote: string | undefined;
  resolvedAt: Date | undefined;
  resolvedBy: string | undefined;
  resolveNote: string | undefined;
}

export interface AlertDelivery {
  alertId: string;
  route: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastError: string | undefined;
  deliveredAt: Date | undefined;
}

export interface AlertRepository {
  /** The alert and one pending delivery per route (the `dashboard` route delivered at once). */
  create(alert: NewAlert, routes: readonly string[]): Promise<void>;
  get(id: string): Promise<Alert | undefined>;
  /** Newest first. */
  list(filter?: { status?: AlertStatus; participantId?: string; limit?: number }): Promise<Alert[]>;
  /** Alerts not yet acknowledged (the dashboard's unread count). */
  countOpen(): Promise<number>;
  /** The alert raised for this inbound message, if one was (a retried message is not flagged twice). */
  findBySourceMessage(sourceMessageId: string): Promise<Alert | undefined>;
  /** An unresolved alert of this kind and rule for the participant (one alert per episode). */
  findUnresolved(participantId: string, kind: string, rule: string): Promise<Alert | undefined>;
  /** False when the alert is not open (already acknowledged or resolved). */
  acknowledge(id: string, by: string, note: string | undefined, at: Date): Promise<boolean>;
  /** False when the alert is already resolved. */
  resolve(id: string, by: string, note: string, at: Date): Promise<boolean>;
  deliveries(alertId: string): Promise<AlertDelivery[]>;
  recordAttempt(
    alertId: string,
    route: string,
    outcome: { status: AlertDelivery['status']; error?: string; at: Date },
  ): Promise<void>;
  /** Puts the participant under staff review (no-op when already). */
  beginReview(participantId: string, alertId: string, at: Date): Promise<void>;
  /** Returns false when the participant was not under review (a held turn goes with the review). */
  endReview(participantId: string): Promise<boolean>;
  /**
   * Holds the coach's turn for this message until the review ends (`SAFETY_COACH_TURN=hold`); the first held message
   * stays when there is one already. No-op when the participant is not under review.
   */
  holdTurn(participantId: string, messageId: string): Promise<void>;
  /** The message whose coach turn is held, if one is. */
  heldTurn(participantId: string): Promise<string | undefined>;
  underReview(participantId: string): Promise<boolean>;
}

/**
 * A conversation a staff member has taken over: the coach does not answer the participant until it is handed back.
 * `timers`: `keep` (the daily prompt goes on) or `pause` (it is skipped while taken over).
 */
export interface Takeover {
  participantId: string;
  takenBy: string;
  startedAt: Date;
  timers: 'keep' | 'pause';
  /** The last staff message, or the start: what the inactivity reminder counts from. */
  lastStaffMessageAt: Date;
}

export interface TakeoverRepository {
  /** False when the conversation is already taken over. */
  begin(takeover: Takeover): Promise<boolean>;
  get(participantId: string): Promise<Takeover | undefined>;
  staffMessageSent(participantId: string, at: Date): Promise<void>;
  /** Returns the takeover that ended, or undefined when there was none. */
  end(participantId: string): Promise<Takeover | undefined>;
}
