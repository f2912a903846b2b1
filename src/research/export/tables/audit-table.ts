import type { ExportColumn } from '../export-types.ts';
import { keysetTable } from './keyset-table.ts';

const columns: ExportColumn[] = [
  { name: 'audit_id', type: 'integer', description: 'Entry id; increases in recording order' },
  { name: 'at', type: 'timestamp', description: 'When it happened (UTC, wall clock)' },
  {
    name: 'actor',
    type: 'string',
    description:
      'Who: a staff e-mail, token:<id> <e-mail> for a personal API token, PROMPTPIPE_API_TOKEN, or the e-mail typed at a failed sign-in',
  },
  { name: 'actor_user_id', type: 'string', description: 'The staff account, when known' },
  { name: 'actor_token_id', type: 'string', description: 'The personal API token used, if any' },
  {
    name: 'action',
    type: 'string',
    description: 'The request (METHOD /route/:param) or sign-in, sign-out, invitation-accepted, staff-created',
  },
  { name: 'participant_id', type: 'string', description: 'The participant acted on, if any' },
  { name: 'address', type: 'string', description: 'The client address the request came from' },
  { name: 'outcome', type: 'string', description: 'success, denied (no or insufficient credentials) or failure' },
  { name: 'status', type: 'integer', description: 'The HTTP status answered, when the action was a request' },
  { name: 'detail', type: 'string', description: 'The account or token acted on, or why it was refused' },
];

export const auditTable = keysetTable({
  name: 'audit',
  description:
    'The audit trail of staff actions: every change, export, bulk read of identifiable data, refusal and sign-in.',
  columns,
  page: ({ store, filter }, after: number | undefined, limit) =>
    store.audit.page(filter.since ? { from: filter.since } : {}, after, limit),
  key: (entry) => entry.id,
  filterBy: (entry) => [entry.participantId],
  row: (entry) => ({
    audit_id: entry.id,
    at: entry.at.toISOString(),
    actor: entry.actor,
    actor_user_id: entry.actorUserId ?? null,
    actor_token_id: entry.actorTokenId ?? null,
    action: entry.action,
    participant_id: entry.participantId ?? null,
    address: entry.address ?? null,
    outcome: entry.outcome,
    status: entry.status ?? null,
    detail: entry.detail ?? null,
  }),
});
