/**
 * A database shaped like the original PromptPipe's (the tables and columns of its internal/store/migrations_*.sql,
 * written here in its SQLite and PostgreSQL dialects) holding a small study in the state the original leaves it:
 * - Ada (`p_feedback`), in FEEDBACK: a profile with tone, a daily schedule at 09:00 in Toronto, today's prompt
 *   already sent at 08:00 (the original prepared an hour ahead), a pending reminder, a chat history;
 * - Ben (`p_intake`), mid-intake: two messages of history, no profile yet;
 * - Cy (`p_paused`), paused, with a schedule;
 * - a participant whose number cannot be read, a queued outgoing message, a response hook, receipts and responses.
 * Phone numbers are digits only, as the original stored them. Times are written as Go's SQLite driver writes them.
 */
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';

/** When the study is moved over: Monday 2 March 2026, 08:30 in Toronto (EST, UTC-5). */
export const MIGRATION_TIME = '2026-03-02T13:30:00.000Z';
/** The original sent Ada's prompt for today at 08:00 local. */
const TODAYS_PROMPT_SENT_AT = '2026-03-02T13:00:00Z';

export const ADA = { id: 'p_feedback', phone: '15551230001', e164: '+15551230001' };
export const BEN = { id: 'p_intake', phone: '447911123456', e164: '+447911123456' };
export const CY = { id: 'p_paused', phone: '15551230003', e164: '+15551230003' };
/** Words of Ada's and Ben's stored history that the coach must see after the move. */
export const ADA_REMEMBERS = 'I walk my dog Biscuit every morning';
export const BEN_REMEMBERS = 'I would like to drink more water';

const SCHEMA = `
create table receipts (id integer primary key autoincrement, recipient text not null, status text not null, time integer not null);
create table responses (id integer primary key autoincrement, sender text not null, body text not null, time integer not null);
create table flow_states (id integer primary key autoincrement, participant_id text not null, flow_type text not null,
  current_state text not null, state_data text, created_at datetime not null default current_timestamp,
  updated_at datetime not null default current_timestamp, unique (participant_id, flow_type));
create table conversation_participants (id text primary key, phone_number text not null unique, name text, gender text,
  ethnicity text, background text, status text not null, enrolled_at datetime not null,
  created_at datetime not null default current_timestamp, updated_at datetime not null default current_timestamp);
create table registered_hooks (phone_number text primary key, hook_type text not null, parameters text not null,
  created_at datetime not null default current_timestamp, updated_at datetime not null default current_timestamp);
create table jobs (id text primary key, kind text not null, run_at datetime not null, payload_json text,
  status text not null default 'queued', attempt integer not null default 0, max_attempts integer not null default 3,
  last_error text, locked_at datetime, dedupe_key text, created_at datetime not null default current_timestamp,
  updated_at datetime not null default current_timestamp);
create table outbox_messages (id text primary key, participant_id text not null, kind text not null, payload_json text,
  status text not null default 'queued', attempts integer not null default 0, next_attempt_at datetime,
  dedupe_key text, locked_at datetime, last_error text, created_at datetime not null default current_timestamp,
  updated_at datetime not null default current_timestamp);
`;

function history(messages: [role: 'user' | 'assistant', content: string][]): string {
  return JSON.stringify({
    messages: messages.map(([role, content], index) => ({
      role,
      content,
      timestamp: `2026-02-2${index % 8}T14:0${index % 10}:00.123456789-05:00`,
    })),
  });
}

const SCHEDULE = (id: string) =>
  JSON.stringify([
    {
      id,
      type: 'fixed',
      fixed_time: '09:00',
      timezone: 'America/Toronto',
      created_at: '2026-02-20T14:05:00Z',
      timer_id: 'sched_original_timer',
    },
  ]);

const PROFILE = JSON.stringify({
  habit_domain: 'walking',
  motivational_frame: 'more energy',
  preferred_time: '09:00',
  prompt_anchor: 'after breakfast',
  additional_info: '',
  intensity: 'high',
  created_at: '2026-02-20T14:00:00Z',
  updated_at: '2026-03-01T14:00:00Z',
  success_count: 4,
  total_prompts: 9,
  tone: { tone_tags: ['warm', 'concise'], tone_scores: { warm: 0.8, concise: 0.6 }, tone_version: 3 },
});

/** The rows, dialect-neutral: [table, columns → values]. */
function rows(): [string, Record<string, string | number | null>][] {
  const participant = (id: string, phone: string, name: string, status: string) => ({
    id,
    phone_number: phone,
    name,
    gender: '',
    ethnicity: '',
    background: '',
    status,
    enrolled_at: '2026-02-20 14:00:00.000000001-05:00',
    created_at: '2026-02-20 19:00:00',
    updated_at: '2026-03-01 19:00:00',
  });
  const state = (participantId: string, data: Record<string, string>) => ({
    participant_id: participantId,
    flow_type: 'conversation',
    current_state: 'CONVERSATION_ACTIVE',
    state_data: JSON.stringify(data),
  });
  return [
    ['conversation_participants', participant(ADA.id, ADA.phone, 'Ada', 'active')],
    ['conversation_participants', participant(BEN.id, BEN.phone, 'Ben', 'active')],
    ['conversation_participants', participant(CY.id, CY.phone, 'Cy', 'paused')],
    ['conversation_participants', participant('p_unreadable', '12', 'Nobody', 'active')],
    [
      'flow_states',
      state(ADA.id, {
        conversationState: 'FEEDBACK',
        userProfile: PROFILE,
        scheduleRegistry: SCHEDULE('sched_ada'),
        lastPromptSentAt: TODAYS_PROMPT_SENT_AT,
        lastHabitPrompt: 'After breakfast, walk Biscuit around the block.',
        dailyPromptPending: JSON.stringify({ sent_at: TODAYS_PROMPT_SENT_AT, to: ADA.phone }),
        dailyPromptReminderTimerID: 'job_original_reminder',
        conversationHistory: history([
          ['assistant', 'Hi Ada! Which habit would you like to build?'],
          ['user', ADA_REMEMBERS],
          ['assistant', 'After breakfast, walk Biscuit around the block.'],
        ]),
      }),
    ],
    [
      'flow_states',
      state(BEN.id, {
        conversationState: 'INTAKE',
        conversationHistory: history([
          ['assistant', 'Hi Ben! Which habit would you like to build?'],
          ['user', BEN_REMEMBERS],
        ]),
      }),
    ],
    ['flow_states', state(CY.id, { conversationState: 'FEEDBACK', scheduleRegistry: SCHEDULE('sched_cy') })],
    [
      'jobs',
      {
        id: 'job_original_reminder',
        kind: 'daily_prompt_reminder',
        run_at: '2026-03-02 18:00:00+00:00',
        payload_json: JSON.stringify({
          participant_id: ADA.id,
          to: ADA.phone,
          expected_sent_at: TODAYS_PROMPT_SENT_AT,
        }),
        status: 'queued',
      },
    ],
    [
      'jobs',
      { id: 'job_done', kind: 'feedback_timeout', run_at: '2026-02-25 18:00:00', payload_json: '{}', status: 'done' },
    ],
    ['outbox_messages', { id: 'out_1', participant_id: BEN.id, kind: 'text', payload_json: '{}', status: 'queued' }],
    ['registered_hooks', { phone_number: ADA.phone, hook_type: 'conversation', parameters: '{}' }],
    ['receipts', { recipient: ADA.phone, status: 'sent', time: 1772456400 }],
    ['receipts', { recipient: ADA.phone, status: 'read', time: 1772456460 }],
    ['responses', { sender: ADA.phone, body: 'Done!', time: 1772460000 }],
    ['responses', { sender: '15557654321', body: 'who is this?', time: 1772460060 }],
  ];
}

/** Writes the original-shaped SQLite database at `path`. */
export function createOriginalSqliteDatabase(path: string): void {
  const db = new SqliteDatabase(path);
  try {
    db.exec(SCHEMA);
    for (const [table, row] of rows()) {
      const columns = Object.keys(row);
      db.prepare(`insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`).run(
        ...Object.values(row),
      );
    }
  } finally {
    db.close();
  }
}

/** The same database on PostgreSQL, in `schema` (created): the original's types (SERIAL, JSONB, TIMESTAMP). */
export async function createOriginalPostgresDatabase(connectionString: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(`create schema "${schema}"`);
    await client.query(`set search_path to "${schema}"`);
    const postgresSchema = SCHEMA.replaceAll('integer primary key autoincrement', 'serial primary key')
      .replaceAll('datetime', 'timestamp')
      .replace('state_data text', 'state_data jsonb')
      .replaceAll('payload_json text', 'payload_json jsonb')
      .replace('parameters text', 'parameters jsonb')
      .replaceAll('time integer', 'time bigint');
    await client.query(postgresSchema);
    for (const [table, row] of rows()) {
      const columns = Object.keys(row);
      const values = Object.values(row).map((value) =>
        typeof value === 'string'
          ? value.replace(/^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(\.\d+)?([+-]\d{2}:\d{2})$/, '$1 $2')
          : value,
      );
      await client.query(
        `insert into ${table} (${columns.join(', ')}) values (${columns.map((_, index) => `$${index + 1}`).join(', ')})`,
        values,
      );
    }
  } finally {
    await client.end();
  }
}
