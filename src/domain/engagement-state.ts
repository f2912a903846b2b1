/**
 * Whether a participant is engaged (the engagement guard, scheduling/timers/engagement-guard.ts): `idle` once they left
 * enough proactive messages unanswered in a row. Stored as the `engagementState` data key; the roster filters on it.
 */
export const EngagementState = { ACTIVE: 'active', IDLE: 'idle' } as const;
export type EngagementState = (typeof EngagementState)[keyof typeof EngagementState];
