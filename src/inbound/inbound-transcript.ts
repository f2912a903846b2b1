import type { InboundMessage, NewTranscriptEntry } from '../store/store.ts';

/**
 * The transcript entry of a participant's message recorded without a turn (not answered because the participant is
 * not active, an opt-out keyword, a message failed after a model outage): kept as study data like any message.
 */
export function unansweredMessageEntry(inbound: InboundMessage): NewTranscriptEntry {
  return {
    participantId: inbound.participantId,
    role: 'user',
    kind: 'message',
    content: inbound.text || inbound.pollAnswer?.option || '',
    sourceMessageId: inbound.id,
    createdAt: inbound.receivedAt,
  };
}
