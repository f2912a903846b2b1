import type { Kysely, Selectable } from 'kysely';
import type { TopLevelState } from '../../domain/conversation-state.ts';
import type { StateData } from '../../domain/data-keys.ts';
import type { FlowState } from '../../domain/flow-state.ts';
import type { FlowStateRepository } from '../ports/conversation-store.ts';
import { fromJson, fromTimestamp, toJson, toTimestamp } from './column-codecs.ts';
import type { Database, FlowStatesTable } from './database.ts';
import { flowStateRow, saveFlowStateRow } from './sql/flow-state.ts';

export function createFlowStateRepository(db: Kysely<Database>): FlowStateRepository {
  return {
    async get(participantId) {
      const row = await flowStateRow(db, participantId);
      return row && toFlowState(row);
    },

    async save(state) {
      await saveFlowStateRow(db, toFlowStateRow(state));
    },

    async delete(participantId) {
      await db.deleteFrom('flow_states').where('participant_id', '=', participantId).execute();
    },
  };
}

function toFlowStateRow(state: FlowState): Selectable<FlowStatesTable> {
  return {
    participant_id: state.participantId,
    flow_type: state.flowType,
    current_state: state.currentState,
    state_data: toJson(state.stateData),
    created_at: toTimestamp(state.createdAt),
    updated_at: toTimestamp(state.updatedAt),
  };
}

function toFlowState(row: Selectable<FlowStatesTable>): FlowState {
  return {
    participantId: row.participant_id,
    flowType: row.flow_type as FlowState['flowType'],
    currentState: row.current_state as TopLevelState,
    stateData: fromJson<StateData>(row.state_data),
    createdAt: fromTimestamp(row.created_at),
    updatedAt: fromTimestamp(row.updated_at),
  };
}
