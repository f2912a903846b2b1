/**
 * A participant's message that is kept but not answered now (held for a coach turn under review, or received during a
 * staff takeover): its transcript entry, its place in the working history, and the event that says why.
 */
import { appendToHistory } from '../engine/conversation-history.ts';
import type { InboundMessage, NewTranscriptEntry, Store } from '../store/store.ts';

/**
 * Writes through `store` (the caller's own routed store), so it joins the caller's unit of work: the caller marks the
 * message processed in the same one.
 */
export async function recordUnansweredInbound(
  store: Store,
  inbound: InboundMessage,
  transcriptEntry: NewTranscriptEntry,
  eventType: string,
  now: Date,
): Promise<void> {
  await store.transcript.append([transcriptEntry]);
  await appendToHistory(store, inbound.participantId, [
    { role: 'user', content: inbound.text, timestamp: inbound.receivedAt.toISOString() },
  ]);
  await store.events.record({
    participantId: inbound.participantId,
    type: eventType,
    data: {},
    sourceMessageId: inbound.id,
    createdAt: now,
  });
}
