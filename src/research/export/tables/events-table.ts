import type { ExportColumn } from '../export-types.ts';
import { keysetTable } from './keyset-table.ts';

const columns: ExportColumn[] = [
  { name: 'event_id', type: 'integer', description: 'Event id; increases in recording order' },
  { name: 'participant_id', type: 'string', description: 'Participant id, empty for study-wide events' },
  {
    name: 'type',
    type: 'string',
    description:
      'noun-verb: participant-enrolled, state-changed, tool-called, prompt-sent, poll-answered, ' +
      'configuration-recorded (start-up configuration and prompt versions), broadcast-created…',
  },
  { name: 'created_at', type: 'timestamp', description: 'When it happened (UTC)' },
  { name: 'source_message_id', type: 'string', description: 'The participant message that caused it, if any' },
  { name: 'data', type: 'json', description: 'The event details (phone fields hashed with --pseudonymize)' },
];

export const eventsTable = keysetTable({
  name: 'events',
  description: 'The audit log: every state change, tool call, prompt, poll answer and start-up configuration.',
  columns,
  page: ({ store, filter }, after: number | undefined, limit) => store.research.eventsPage(filter, after, limit),
  key: (event) => event.id,
  row: (event, { pseudonymizer }) => ({
    event_id: event.id,
    participant_id: event.participantId ?? null,
    type: event.type,
    created_at: event.createdAt.toISOString(),
    source_message_id: event.sourceMessageId ?? null,
    data: pseudonymizer ? pseudonymizer.json(event.data) : event.data,
  }),
});
