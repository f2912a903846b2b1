import type { Decision } from '../store/decisions.ts';

/** A decision row as the API and the export write it. */
export function decisionJson(decision: Decision) {
  return {
    id: decision.id,
    participant_id: decision.participantId,
    study_id: decision.studyId,
    arm: decision.armId,
    decision_point: decision.decisionPointId,
    local_date: decision.localDate,
    slot: decision.slot,
    intended_at: decision.intendedAt.toISOString(),
    intended_local: decision.intendedLocal,
    available: decision.available,
    unavailable_reason: decision.unavailableReason,
    probabilities: decision.probabilities,
    option: decision.option,
    draw: decision.draw,
    design_hash: decision.designHash,
    decided_at: decision.decidedAt.toISOString(),
    sent_outbound_id: decision.sentOutboundId,
    sent_at: decision.sentAt?.toISOString() ?? null,
    outcome: decision.outcome,
    outcome_at: decision.outcomeAt?.toISOString() ?? null,
  };
}
