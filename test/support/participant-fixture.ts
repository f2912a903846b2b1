/** A participant as the store keeps one: active, default channel, UTC, enrolled and created at `at`. */
import type { Participant } from '../../src/domain/participant.ts';

export function participantFixture(
  id: string,
  phoneNumber: string,
  at: Date,
  overrides: Partial<Participant> = {},
): Participant {
  return {
    id,
    phoneNumber,
    name: '',
    gender: '',
    ethnicity: '',
    background: '',
    timezone: 'UTC',
    channel: '',
    status: 'active',
    enrolledAt: at,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}
