/** A participant's flow state: read on every turn and job, written once per transaction that changed it. */
import type { Kysely, Selectable } from 'kysely';
import type { Database, FlowStatesTable } from '../database.ts';
import { hotStatement, runHot } from './hot-statement.ts';

export const readFlowState = hotStatement(
  'flow_state_read',
  `select participant_id, flow_type, current_state, state_data, created_at, updated_at
   from flow_states where participant_id = $1`,
);

export const writeFlowState = hotStatement(
  'flow_state_write',
  `insert into flow_states (participant_id, flow_type, current_state, state_data, created_at, updated_at)
   values ($1, $2, $3, $4, $5, $6)
   on conflict (participant_id) do update set flow_type = excluded.flow_type,
     current_state = excluded.current_state, state_data = excluded.state_data,
     created_at = excluded.created_at, updated_at = excluded.updated_at`,
);

export type FlowStateRow = Selectable<FlowStatesTable>;

export async function flowStateRow(db: Kysely<Database>, participantId: string): Promise<FlowStateRow | undefined> {
  const { rows } = await runHot<FlowStateRow>(db, readFlowState, [participantId]);
  return rows[0];
}

export async function saveFlowStateRow(db: Kysely<Database>, row: FlowStateRow): Promise<void> {
  await runHot(db, writeFlowState, [
    row.participant_id,
    row.flow_type,
    row.current_state,
    row.state_data,
    row.created_at,
    row.updated_at,
  ]);
}
