/**
 * Micro-randomised decisions (part of the storage port, `store.ts`): one row per participant, decision point, local
 * day and time slot, keyed by exactly that, so a decision point is decided once whatever restarts, retries or
 * instances come between — the second writer's insert does nothing.
 */

export interface Decision {
  /** `<study>|<participant>|<decision point>|<local date>|<slot>`: what makes it once. */
  id: string;
  participantId: string;
  studyId: string;
  /** The arm in force when decided ('' when the participant has no allocation). */
  armId: string;
  decisionPointId: string;
  localDate: string;
  slot: number;
  /** When the moment was meant to be (with its jitter), and the same as local wall-clock time. */
  intendedAt: Date;
  intendedLocal: string;
  available: boolean;
  /** Why not available (`paused`, `withdrawn`, `idle`, `quiet_hours`, `answered_today`); null when available. */
  unavailableReason: string | null;
  /** The probability of each option for this participant's arm. */
  probabilities: Record<string, number>;
  /** The option drawn; null when unavailable. */
  option: string | null;
  /** The uniform draw in [0, 1) that chose it; null when unavailable. */
  draw: number | null;
  designHash: string;
  decidedAt: Date;
  /** What was sent (the outbound message id) and when; null when the option sends nothing. */
  sentOutboundId: string | null;
  sentAt: Date | null;
  /** The proximal outcome the design names, once known. */
  outcome: Record<string, unknown> | null;
  outcomeAt: Date | null;
}

export interface DecisionRepository {
  /** Inserts the decision unless one with its id exists; true when this call decided it. */
  decide(decision: Decision): Promise<boolean>;
  get(id: string): Promise<Decision | undefined>;
  recordOutcome(id: string, outcome: Record<string, unknown>, at: Date): Promise<void>;
  /** A participant's decisions, oldest intended first. */
  listForParticipant(participantId: string): Promise<Decision[]>;
  /** Every decision by id after `after` (keyset pages, for the export). */
  page(after: string | undefined, limit: number): Promise<Decision[]>;
}
