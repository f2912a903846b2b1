/**
 * Who sent a message: the participant enrolled with the sender's phone number, or, with `AUTO_ENROLL_NEW_USERS`, a
 * participant enrolled for them on the spot (without the greeting).
 */
import { AppError } from '../domain/errors.ts';
import type { Participant } from '../domain/participant.ts';
import type { ParticipantService } from '../participants/participant-service.ts';
import type { ChannelInboundMessage } from './inbound-port.ts';

export function createSenderResolution(options: {
  participants: Pick<ParticipantService, 'findByPhone' | 'enroll'>;
  autoEnroll: boolean;
}): (message: ChannelInboundMessage) => Promise<Participant> {
  const { participants } = options;
  return async function resolveSender(message) {
    const existing = await participants.findByPhone(message.from);
    if (existing) return existing;
    if (!options.autoEnroll) {
      throw new AppError('not_found', `no participant is enrolled with phone number ${message.from}`);
    }
    try {
      return await participants.enroll({ phoneNumber: message.from }, { greet: false, source: 'auto-enroll' });
    } catch (error) {
      // Two first messages of one new sender race to enrol them: the loser uses the winner's enrolment.
      const winner =
        error instanceof AppError && error.code === 'conflict' && (await participants.findByPhone(message.from));
      if (winner) return winner;
      throw error;
    }
  };
}
