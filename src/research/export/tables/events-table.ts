import { keysetPages } from '../../../store/keyset-pages.ts';
import {
  EXPORT_PAGE_SIZE,
  type ExportColumn,
  type ExportContext,
  type ExportRow,
  type ExportTable,
} from '../export-types.ts';

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

async function* rows(context: ExportContext): AsyncGenerator<ExportRow> {
  const { store, filter, pseudonymizer } = context;
  const pages = keysetPages(
    (after: number | undefined, limit) => store.research.eventsPage(filter, after, limit),
    EXPORT_PAGE_SIZE,
  );
  for await (const page of pages) {
    for (const event of page) {
      yield {
        event_id: event.id,
        participant_id: event.participantId ?? null,
        type: event.type,
        created_at: event.createdAt.toISOString(),
        source_message_id: event.sourceMessageId ?? null,
        data: pseudonymizer ? pseudonymizer.json(event.data) : event.data,
      };
    }
  }
}

export const eventsTable: ExportTable = {
  name: 'events',
  description: 'The audit log: every state change, tool call, prompt, poll answer and start-up configuration.',
  columns,
  rows,
};
