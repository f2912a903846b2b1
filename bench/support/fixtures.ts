/**
 * Realistic data for the benchmarks: enrolled participants whose flow state already holds a full working history
 * (50 messages) and a filled-in profile, so every read-modify-write moves a row of production size from the first
 * measured iteration on.
 */
import { ConversationState } from '../../src/domain/conversation-state.ts';
import { DataKey, type StateData } from '../../src/domain/data-keys.ts';
import { type ConversationMessage, MAX_STORED_HISTORY } from '../../src/domain/history.ts';
import { formatParticipantBackground, type Participant } from '../../src/domain/participant.ts';
import { newFlowState } from '../../src/domain/participant-data.ts';
import { parseProfile, serializeProfile } from '../../src/domain/profile.ts';
import type { Store } from '../../src/store/store.ts';

/** The instant every benchmark's manual clock starts at. */
export const BENCH_START = new Date('2026-03-02T14:00:00.000Z');

/** The id of the `index`-th benchmark participant (from 0). */
export function participantIdOf(index: number): string {
  return `p_bench_${index}`;
}

/** A participant with a unique id and phone number. */
export function benchParticipant(index: number, now: Date = BENCH_START): Participant {
  return {
    id: participantIdOf(index),
    phoneNumber: `+1555${String(index).padStart(7, '0')}`,
    name: `Participant ${index}`,
    gender: '',
    ethnicity: '',
    background: 'Works shifts at a hospital; wants to move more.',
    timezone: 'America/Toronto',
    channel: '',
    status: 'active',
    enrolledAt: now,
    createdAt: now,
    updatedAt: now,
  };
}

/** A full working history: 50 alternating messages of a typical length. */
export function fullWorkingHistory(now: Date = BENCH_START): ConversationMessage[] {
  return Array.from({ length: MAX_STORED_HISTORY }, (_, index) => ({
    role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content:
      index % 2 === 0
        ? `Message ${index}: I did the walk after lunch today, it felt good but I was a bit short on time.`
        : `Reply ${index}: That is great progress! Would a shorter 5-minute walk right after lunch make it easier tomorrow?`,
    timestamp: new Date(now.getTime() - (MAX_STORED_HISTORY - index) * 60_000).toISOString(),
  }));
}

/** The state data of a participant in the middle of intake, with a partly filled profile (the history is apart). */
export function midConversationStateData(participant: Participant, now: Date = BENCH_START): StateData {
  const profile = parseProfile('', now);
  profile.habit_domain = 'movement';
  profile.motivational_frame = 'more energy for my children';
  return {
    [DataKey.participantBackground]: formatParticipantBackground(participant),
    [DataKey.conversationState]: ConversationState.INTAKE,
    [DataKey.userProfile]: serializeProfile(profile),
  };
}

/**
 * Enrols participants 0 … count − 1, each with a mid-conversation flow state and a full working history, in one
 * transaction.
 */
export async function enrollParticipants(store: Store, count: number, now: Date = BENCH_START): Promise<Participant[]> {
  const participants = Array.from({ length: count }, (_, index) => benchParticipant(index, now));
  await store.transaction(async (transaction) => {
    for (const participant of participants) {
      await transaction.participants.create(participant);
      await transaction.flowStates.save(newFlowState(participant.id, now, midConversationStateData(participant, now)));
      const history = fullWorkingHistory(now).map((message) => JSON.stringify(message));
      await transaction.history.append(participant.id, 1, history);
    }
  });
  return participants;
}
