import type { TopLevelState } from './conversation-state.ts';
import type { StateData } from './data-keys.ts';

/** The persistence record of one participant's conversation (specification §State). */
export interface FlowState {
  participantId: string;
  flowType: 'conversation';
  /** Always `CONVERSATION_ACTIVE`. */
  currentState: TopLevelState;
  stateData: StateData;
  createdAt: Date;
  updatedAt: Date;
}
