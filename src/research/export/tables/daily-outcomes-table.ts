import { DataKey } from '../../../domain/data-keys.ts';
import { parseProfile } from '../../../domain/profile.ts';
import { keysetPages } from '../../../store/keyset-pages.ts';
import {
  EXPORT_PAGE_SIZE,
  type ExportColumn,
  type ExportContext,
  type ExportRow,
  type ExportTable,
} from '../export-types.ts';
import { DailyOutcomeCollector, localDateTimeOf } from './daily-outcomes.ts';

const columns: ExportColumn[] = [
  { name: 'participant_id', type: 'string', description: 'Participant id' },
  {
    name: 'arm',
    type: 'string',
    description: 'The trial arm in force at export (allocations.arm); empty without a study design',
  },
  { name: 'local_date', type: 'date', description: "The study day: the prompt's date in the participant's zone" },
  { name: 'timezone', type: 'string', description: "The participant's IANA zone (UTC when unknown)" },
  { name: 'prompt_sent_at_utc', type: 'timestamp', description: 'When the daily prompt was sent (UTC)' },
  { name: 'prompt_sent_at_local', type: 'string', description: 'The same instant, local wall-clock time' },
  { name: 'prompt_text', type: 'string', description: 'The habit prompt sent' },
  { name: 'first_reply_at', type: 'timestamp', description: 'First participant message after the prompt (UTC)' },
  { name: 'reply_latency_seconds', type: 'integer', description: 'Seconds from the prompt to that first message' },
  {
    name: 'outcome',
    type: 'string',
    description: '"Done" or "Next time" (answer to "Did you do it?" before the next prompt), or "no answer"',
  },
  { name: 'reminder_sent', type: 'boolean', description: 'Whether the no-reply reminder was sent that day' },
  { name: 'reminder_sent_at', type: 'timestamp', description: 'When the reminder was sent (UTC)' },
  {
    name: 'intensity_at_prompt',
    type: 'string',
    description: 'Intensity (low, normal, high) when the prompt went out',
  },
  {
    name: 'intensity_change',
    type: 'string',
    description:
      'Answer to the intensity poll that day: "low → normal", "kept normal"; empty when not asked or not answered',
  },
  { name: 'feedback_barrier', type: 'string', description: 'Barrier recorded in feedback that day (free text)' },
  { name: 'feedback_tweak', type: 'string', description: 'Tweak recorded in feedback that day (free text)' },
];

async function* rows(context: ExportContext): AsyncGenerator<ExportRow> {
  const { store, filter } = context;
  const participants = keysetPages(
    (after: string | undefined, limit) =>
      store.research.participantsPage({ participantIds: filter.participantIds }, after, limit),
    100,
  );
  for await (const page of participants) {
    for (const participant of page) {
      const collector = new DailyOutcomeCollector();
      const scoped = { participantIds: [participant.id], ...(filter.since ? { since: filter.since } : {}) };
      const events = keysetPages(
        (after: number | undefined, limit) => store.research.eventsPage(scoped, after, limit),
        EXPORT_PAGE_SIZE,
      );
      for await (const eventPage of events) for (const event of eventPage) collector.addEvent(event);
      const entries = keysetPages(
        (after: number | undefined, limit) => store.research.transcriptPage(scoped, after, limit),
        EXPORT_PAGE_SIZE,
      );
      for await (const entryPage of entries) for (const entry of entryPage) collector.addEntry(entry);
      const flow = await store.flowStates.get(participant.id);
      const arm = (await store.allocations.get(participant.id))?.armId ?? null;
      const initial = parseProfile(flow?.stateData[DataKey.userProfile], participant.updatedAt).intensity;
      for (const day of collector.outcomes(participant.id, participant.timezone, initial)) {
        yield {
          participant_id: day.participantId,
          arm,
          local_date: day.localDate,
          timezone: day.timezone || 'UTC',
          prompt_sent_at_utc: day.promptSentAt.toISOString(),
          prompt_sent_at_local: localDateTimeOf(day.promptSentAt, day.timezone),
          prompt_text: day.promptText,
          first_reply_at: day.firstReplyAt?.toISOString() ?? null,
          reply_latency_seconds: day.firstReplyAt
            ? Math.round((day.firstReplyAt.getTime() - day.promptSentAt.getTime()) / 1000)
            : null,
          outcome: day.answer,
          reminder_sent: day.reminderSentAt !== undefined,
          reminder_sent_at: day.reminderSentAt?.toISOString() ?? null,
          intensity_at_prompt: day.intensityAtPrompt,
          intensity_change: day.intensityChange ?? null,
          feedback_barrier: day.feedbackBarrier ?? null,
          feedback_tweak: day.feedbackTweak ?? null,
        };
      }
    }
  }
}

export const dailyOutcomesTable: ExportTable = {
  name: 'daily_outcomes',
  description:
    'One row per participant per local study day (from one daily prompt to the next): prompt, first reply and ' +
    'latency, Done / Next time / no answer, reminder, intensity and its change, feedback given.',
  columns,
  rows,
};
