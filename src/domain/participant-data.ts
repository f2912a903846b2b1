/**
 * Reading and writing a participant's `state_data`. Functions take repositories so they work both on the store and
 * inside a transaction. Writes are read-modify-write: callers hold the participant lock (see participant-lock.ts),
 * which is what makes that safe.
 */

import type { ConversationState } from './conversation-state.ts';
import { DEFAULT_CONVERSATION_STATE, isConversationState, TOP_LEVEL_STATE } from './conversation-state.ts';
import { DataKey, type StateData } from './data-keys.ts';
import type { FlowState } from './flow-state.ts';
import { parseProfile, serializeProfile, type UserProfile } from './profile.ts';

/** The part of the flow-state repository these functions use (the store's `flowStates` satisfies it). */
interface Repositories {
  readonly flowStates: {
    get(participantId: string): Promise<FlowState | undefined>;
    save(state: FlowState): Promise<void>;
  };
}

export function newFlowState(participantId: string, now: Date, stateData: StateData = {}): FlowState {
  return {
    participantId,
    flowType: 'conversation',
    currentState: TOP_LEVEL_STATE,
    stateData,
    createdAt: now,
    updatedAt: now,
  };
}

/** The participant's state data; `{}` when no flow state exists yet. */
export async function readData(repositories: Repositories, participantId: string): Promise<StateData> {
  const state = await repositories.flowStates.get(participantId);
  return state ? { ...state.stateData } : {};
}

export async function readValue(repositories: Repositories, participantId: string, key: DataKey): Promise<string> {
  return (await readData(repositories, participantId))[key] ?? '';
}

/**
 * Merges `entries` into the state data (an empty string removes the key) and saves. Creates the flow state with
 * `CONVERSATION_ACTIVE` when missing: the top-level state is never anything else.
 */
export async function writeData(
  repositories: Repositories,
  participantId: string,
  entries: StateData,
  now: Date,
): Promise<StateData> {
  const state = (await repositories.flowStates.get(participantId)) ?? newFlowState(participantId, now);
  const stateData: StateData = { ...state.stateData };
  for (const [key, value] of Object.entries(entries) as [DataKey, string | undefined][]) {
    if (value === undefined || value === '') delete stateData[key];
    else stateData[key] = value;
  }
  await repositories.flowStates.save({ ...state, currentState: TOP_LEVEL_STATE, stateData, updatedAt: now });
  return stateData;
}

export async function readProfile(repositories: Repositories, participantId: string, now: Date): Promise<UserProfile> {
  return parseProfile(await readValue(repositories, participantId, DataKey.userProfile), now);
}

export async function writeProfile(
  repositories: Repositories,
  participantId: string,
  profile: UserProfile,
  now: Date,
): Promise<void> {
  await writeData(repositories, participantId, { [DataKey.userProfile]: serializeProfile(profile) }, now);
}

/** The sub-state, defaulting to INTAKE when empty or unknown. */
export function conversationStateOf(data: StateData): ConversationState {
  const value = data[DataKey.conversationState];
  return isConversationState(value) ? value : DEFAULT_CONVERSATION_STATE;
}
