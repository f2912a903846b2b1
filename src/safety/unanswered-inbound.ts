/**
 * A participant's message that is kept but not answered now (held for a coach turn under review, or received during a
 * staff takeover): its transcript entry, its place in the working history, and the event that says why.
 */
import { appendToHistory } from '../engine/conversation-history.ts';
import type { InboundMessage, NewTranscriptEntry, Store } from '../store/store.ts';

export async function recordUnansweredInbound(
  tx: Store,
  inbound: InboundMessage,
  transcriptEntry: NewTranscriptEntry,
  eventType: string,
  now: Date,
): Promise<void> {
  await tx.transcript.append([transcriptEntry]);
  await appendToHistory(tx, inbound.participantId, [
    { role: 'user', content: inbound.text, timestamp: inbound.receivedAt.toISOString() },
  ]);
  await tx.events.record({
    participantId: inbound.participantId,
    type: eventType,
    data: {},
    sourceMessageId: inbound.id,
    createdAt: now,
  });
}
