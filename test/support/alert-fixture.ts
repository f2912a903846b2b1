import type { NewAlert } from '../../src/store/safety-records.ts';

/** An adherence alert of `participantId` under `rule`, as the adherence check records it (normal urgency). */
export function adherenceAlertFixture(id: string, participantId: string, rule: string, createdAt: Date): NewAlert {
  return {
    id,
    participantId,
    kind: 'adherence',
    detector: 'adherence',
    rule,
    score: undefined,
    urgency: 'normal',
    reason: 'test',
    sourceMessageId: undefined,
    createdAt,
  };
}
