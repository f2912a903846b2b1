import { DataKey } from '../../../domain/data-keys.ts';
import { conversationStateOf } from '../../../domain/participant-data.ts';
import { parseProfile } from '../../../domain/profile.ts';
import type { ExportColumn, ExportRow } from '../export-types.ts';
import { keysetTable } from './keyset-table.ts';

const PROFILE_TEXT = [
  ['habit_domain', 'Habit the participant is building (intake)'],
  ['motivational_frame', 'Why it matters to them (intake)'],
  ['preferred_time', 'Preferred prompt time (intake)'],
  ['prompt_anchor', 'Existing routine the habit is anchored to (intake)'],
  ['additional_info', 'Anything else the participant shared'],
  ['intensity', 'Current intensity: low, normal or high'],
  ['last_successful_prompt', 'The last prompt the participant completed'],
  ['last_barrier', 'The last barrier they reported (feedback)'],
  ['last_tweak', 'The last tweak they asked for (feedback)'],
  ['last_motivator', 'The last motivator they named (feedback)'],
] as const;

const columns: ExportColumn[] = [
  { name: 'participant_id', type: 'string', description: 'Participant id (stable across all files)' },
  { name: 'phone_number', type: 'string', description: 'E.164 phone number; with --pseudonymize the keyed hash pn_…' },
  { name: 'name', type: 'string', description: 'Name given at enrolment; empty with --pseudonymize' },
  { name: 'gender', type: 'string', description: 'Gender given at enrolment' },
  { name: 'ethnicity', type: 'string', description: 'Ethnicity given at enrolment' },
  { name: 'background', type: 'string', description: 'Background given at enrolment (free text)' },
  { name: 'timezone', type: 'string', description: 'IANA time zone, empty when unknown' },
  { name: 'channel', type: 'string', description: 'Messaging channel the participant is reached on' },
  {
    name: 'language',
    type: 'string',
    description: 'BCP 47 tag of the language the coach and every fixed text use (en, es, pt-BR…)',
  },
  { name: 'status', type: 'string', description: 'active, paused, completed or withdrawn' },
  { name: 'conversation_state', type: 'string', description: 'Sub-state: INTAKE or FEEDBACK' },
  { name: 'enrolled_at', type: 'timestamp', description: 'Enrolment time (UTC, ISO 8601)' },
  { name: 'created_at', type: 'timestamp', description: 'Record creation time (UTC)' },
  { name: 'updated_at', type: 'timestamp', description: 'Last change of the record (UTC)' },
  ...PROFILE_TEXT.map(([name, description]) => ({ name, type: 'string' as const, description })),
  { name: 'success_count', type: 'integer', description: 'Daily prompts answered "Done"' },
  { name: 'total_prompts', type: 'integer', description: 'Daily prompts sent' },
  { name: 'tone_tags', type: 'string', description: 'Tone tags the coach adapts to, separated by ";"' },
];

export const participantsTable = keysetTable({
  name: 'participants',
  description: 'One row per participant: enrolment fields, status, channel, times, profile fields and tone tags.',
  columns,
  page: ({ store, filter }, after: string | undefined, limit) => store.research.participantsPage(filter, after, limit),
  key: (participant) => participant.id,
  async row(participant, { store, pseudonymizer, defaultChannel }) {
    const flow = await store.flowStates.get(participant.id);
    const data = flow?.stateData ?? {};
    const profile = parseProfile(data[DataKey.userProfile], participant.updatedAt);
    const channel = (participant as { channel?: string }).channel;
    const row: ExportRow = {
      participant_id: participant.id,
      phone_number: pseudonymizer ? pseudonymizer.phone(participant.phoneNumber) : participant.phoneNumber,
      name: pseudonymizer ? '' : participant.name,
      gender: participant.gender,
      ethnicity: participant.ethnicity,
      background: participant.background,
      timezone: participant.timezone,
      channel: channel || defaultChannel,
      language: participant.language ?? '',
      status: participant.status,
      conversation_state: conversationStateOf(data),
      enrolled_at: participant.enrolledAt.toISOString(),
      created_at: participant.createdAt.toISOString(),
      updated_at: participant.updatedAt.toISOString(),
    };
    for (const [name] of PROFILE_TEXT) row[name] = String(profile[name] ?? '');
    row['success_count'] = profile.success_count;
    row['total_prompts'] = profile.total_prompts;
    row['tone_tags'] = profile.tone.tone_tags.join(';');
    return row;
  },
});
