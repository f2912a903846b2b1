/**
 * A study at scale for the dashboard benchmark, written straight into the tables with a few `INSERT … SELECT`
 * statements over a generated series (a recursive CTE on SQLite, `generate_series` on PostgreSQL): `participants`
 * enrolled a month ago, each with a flow state, and for every participant and study day what a day of the study
 * leaves behind: the daily prompt and its Done poll, the participant's reply (70 % of days; "Done" on 45 %), the tool
 * calls, the coach's reply or the no-reply reminder, the events, the jobs (the daily prompt and the deliveries, 0.1 %
 * failed) and the LLM calls. Paused participants stop getting prompts on day 20, withdrawn ones on day 10, each with
 * the status change recorded as the service records it.
 *
 * Everything is derived from the participant and day numbers (`r` below), so both databases get the same study.
 */
import { DAILY_PROMPT_REMINDER_MESSAGE } from '../../src/scheduling/timers/daily-prompt-reminder.ts';

export interface StudyShape {
  participants: number;
  days: number;
  /** Midnight UTC of the first study day. */
  start: Date;
}

/** The instant the benchmark's clock is set to: late on the last seeded day, every prompt of it sent. */
export function studyNow(shape: StudyShape): Date {
  return new Date(shape.start.getTime() + ((shape.days - 1) * 24 + 22) * 3_600_000);
}

/** What differs between the two databases in the seeding SQL. */
interface SeedSql {
  /** A CTE named `n(i)` counting 1…count. */
  series(count: number): string;
  /** `prefix` followed by the number `expression`, zero-padded to `width`. */
  padded(prefix: string, expression: string, width: number): string;
  /** The instant `secondsExpression` seconds after the Unix epoch, as the column stores it. */
  instant(secondsExpression: string): string;
  /** The calendar date (YYYY-MM-DD) of `secondsExpression` seconds after the epoch. */
  date(secondsExpression: string): string;
  /** A JSON object from alternating key/value SQL expressions, as the column stores it. */
  object(...pairs: string[]): string;
  /** A JSON object as text (for a value nested as a string, like `userProfile`). */
  objectText(...pairs: string[]): string;
  /** The `data ->> 'kind'` of an event row `e`. */
  eventKind: string;
  /** Whether `jobs.enqueue_order` is written by the insert (SQLite) or numbered by the database (PostgreSQL). */
  writesJobOrder: boolean;
}

export const SQLITE_SEED: SeedSql = {
  series: (count) => `with recursive n(i) as (select 1 union all select i + 1 from n where i < ${count})`,
  padded: (prefix, expression, width) => `('${prefix}' || printf('%0${width}d', ${expression}))`,
  instant: (seconds) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${seconds}, 'unixepoch')`,
  date: (seconds) => `date(${seconds}, 'unixepoch')`,
  object: (...pairs) => `json_object(${pairs.join(', ')})`,
  objectText: (...pairs) => `json_object(${pairs.join(', ')})`,
  eventKind: "json_extract(e.data, '$.kind')",
  writesJobOrder: true,
};

export const POSTGRES_SEED: SeedSql = {
  series: (count) => `with n(i) as (select generate_series(1, ${count}))`,
  padded: (prefix, expression, width) => `('${prefix}' || lpad((${expression})::text, ${width}, '0'))`,
  instant: (seconds) => `to_timestamp(${seconds})`,
  date: (seconds) => `to_char(to_timestamp(${seconds}) at time zone 'UTC', 'YYYY-MM-DD')`,
  object: (...pairs) => `jsonb_build_object(${pairs.join(', ')})`,
  objectText: (...pairs) => `jsonb_build_object(${pairs.join(', ')})::text`,
  eventKind: "e.data ->> 'kind'",
  writesJobOrder: false,
};

const FIRST_NAMES = ['Ada', 'Grace', 'Linus', 'Maria', 'Kofi', 'Aiko', 'Omar', 'Lucía', 'Chen', 'Priya'];
const LAST_NAMES = ['Lovelace', 'Hopper', 'Torvalds', 'García', 'Mensah', 'Tanaka', 'Haddad', 'Silva', 'Wei', 'Rao'];
/** Zones and the UTC hour of their 09:00 prompt (standard time; the seed ignores daylight saving). */
const ZONES: readonly [string, number][] = [
  ['America/Toronto', 14],
  ['Europe/Madrid', 8],
  ['UTC', 9],
  ['Asia/Tokyo', 0],
];

const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;
const pick = (values: readonly string[], index: string) =>
  `(case ${values.map((value, position) => `when ${index} = ${position} then ${quote(value)}`).join(' ')} end)`;

/** The statements that seed `shape`, in order. */
export function seedStatements(shape: StudyShape, seed: SeedSql): string[] {
  const start = Math.floor(shape.start.getTime() / 1000);
  const enrolled = `(${start} - 86400 + p)`;
  const zone = `(p % ${ZONES.length})`;
  const promptHour = `(case ${ZONES.map(([, hour], index) => `when ${zone} = ${index} then ${hour}`).join(' ')} end)`;
  // The participant's last prompted day: paused ones stop on day 20, withdrawn ones on day 10.
  const status = `(case when p % 100 < 90 then 'active' when p % 100 < 95 then 'paused' when p % 100 < 98 then 'withdrawn' else 'completed' end)`;
  const stopDay = `(case when p % 100 < 90 then ${shape.days} when p % 100 < 95 then 20 when p % 100 < 98 then 10 else ${shape.days} end)`;
  const grid = `${seed.series(Math.max(shape.participants, shape.days))},
    people(p) as (select i from n where i <= ${shape.participants}),
    days(d) as (select i - 1 from n where i <= ${shape.days}),
    grid as (
      select p, d, (p * 7919 + d * 104729) % 1000 as r, ${start} + d * 86400 + ${promptHour} * 3600 as t
      from people, days where d < ${stopDay}
    )`;
  const participant = seed.padded('p', 'p', 5);
  const replied = 'r < 700';
  const done = 'r < 450';
  const latency = '(60 + (r * 37) % 10800)';
  const replyAt = `(t + ${latency})`;
  const localDate = seed.date(`${start} + d * 86400`);

  const participants = `insert into participants
      (id, phone_number, name, gender, ethnicity, background, timezone, language, channel, status, enrolled_at, created_at, updated_at)
    ${seed.series(shape.participants)}, people(p) as (select i from n)
    select ${participant}, ${seed.padded('+1555', 'p', 7)},
      ${pick(FIRST_NAMES, `(p % ${FIRST_NAMES.length})`)} || ' ' || ${pick(LAST_NAMES, `((p / ${FIRST_NAMES.length}) % ${LAST_NAMES.length})`)},
      '', '', 'Works shifts; wants to walk more.',
      ${pick(
        ZONES.map(([name]) => name),
        zone,
      )}, 'en', '', ${status},
      ${seed.instant(enrolled)}, ${seed.instant(enrolled)}, ${seed.instant(enrolled)}
    from people`;

  const prompt = quote('Time for your 10-minute walk right after breakfast: shoes by the door, and off you go!');
  const poll = quote('Did you do it?\n1. Done\n2. Next time');
  const coachReply = quote(
    'Wonderful, that is another day of walking after breakfast. Keep the shoes by the door; tomorrow the same time?',
  );
  const transcriptColumns =
    '(participant_id, role, kind, content, tool_calls, tool_call_id, tool_name, module, created_at)';
  const transcriptRow = (role: string, kind: string, content: string, at: string, toolCalls = 'null', tool = 'null') =>
    `select ${participant}, '${role}', '${kind}', ${content}, ${toolCalls}, ${tool === 'null' ? 'null' : "'call_1'"}, ${tool}, 'FEEDBACK', ${seed.instant(at)} from grid`;
  const transcript = [
    transcriptRow('assistant', 'proactive', prompt, 't'),
    transcriptRow('assistant', 'poll', poll, 't'),
    `${transcriptRow('user', 'message', `(case when ${done} then 'Done' when r < 550 then 'Next time' else 'Rained all morning, I will go tonight.' end)`, replyAt)} where ${replied}`,
    `${transcriptRow('assistant', 'tool_call', "''", `${replyAt} + 2`, seed.object("'id'", "'call_1'", "'name'", "'save_user_profile'", "'arguments'", quote('{"last_barrier":"rain"}')))} where ${replied}`,
    `${transcriptRow('tool', 'tool_result', quote('{"status":"success"}'), `${replyAt} + 3`, 'null', "'save_user_profile'")} where ${replied}`,
    `${transcriptRow('assistant', 'reply', coachReply, `${replyAt} + 5`)} where ${replied}`,
    `${transcriptRow('assistant', 'proactive', quote(DAILY_PROMPT_REMINDER_MESSAGE), 't + 7200')} where not (${replied})`,
  ].map((select) => `insert into transcript ${transcriptColumns} ${grid} ${select}`);

  const eventRow = (type: string, data: string, at: string) =>
    `select ${participant}, '${type}', ${data}, ${seed.instant(at)} from grid`;
  const events = [
    eventRow(
      'prompt-sent',
      seed.object(
        "'schedule_id'",
        "'s1'",
        "'local_date'",
        localDate,
        "'late_ms'",
        '0',
        "'fallback'",
        'false',
        "'prompt'",
        prompt,
      ),
      't',
    ),
    `${eventRow('poll-answered', seed.object("'kind'", "'success-counted'", "'question'", "'Did you do it?'", "'option'", "'Done'"), replyAt)} where ${done}`,
    `${eventRow('tool-called', seed.object("'name'", "'save_user_profile'", "'arguments'", seed.object("'last_barrier'", "'rain'")), `${replyAt} + 2`)} where ${replied}`,
    `${eventRow('tool-called', seed.object("'name'", "'scheduler'", "'arguments'", seed.object("'action'", "'list'")), `${replyAt} + 3`)} where ${replied}`,
    `${eventRow('reminder-cancelled', seed.object("'reason'", "'participant-replied'"), replyAt)} where ${replied}`,
    `${eventRow('poll-answered', seed.object("'kind'", "'intensity-kept'", "'intensity'", "'normal'"), `${replyAt} + 600`)} where d % 3 = 0 and r % 2 = 0`,
  ].map((select) => `insert into events (participant_id, type, data, created_at) ${grid} ${select}`);
  const statusChanges = `insert into events (participant_id, type, data, created_at)
    ${seed.series(shape.participants)}, people(p) as (select i from n)
    select ${participant}, 'participant-updated',
      ${seed.object("'fields'", seed.object(), "'status_from'", "'active'", "'status_to'", status)},
      ${seed.instant(`${start} + ${stopDay} * 86400 - 3600`)}
    from people where p % 100 >= 90 and p % 100 < 98`;

  // SQLite's next order is above the largest rowid (src/store/kysely/sql/enqueue-job.ts), so 0 keeps every order below its rowid.
  const jobColumns = `(id, ${seed.writesJobOrder ? 'enqueue_order, ' : ''}kind, participant_id, run_at, payload, status, attempts, max_attempts, created_at, updated_at)`;
  const jobRow = (suffix: string, kind: string, at: string, jobStatus: string) =>
    `select ${participant} || '-' || d || '-${suffix}', ${seed.writesJobOrder ? '0, ' : ''}'${kind}', ${participant}, ${seed.instant(at)},
      ${seed.object("'participant_id'", participant)}, ${jobStatus}, 1, 3, ${seed.instant(at)}, ${seed.instant(`${at} + 1`)} from grid`;
  const jobs = [
    jobRow('daily', 'daily_prompt', 't - 600', "'completed'"),
    jobRow('prompt', 'deliver_message', 't', "case when r = 999 then 'failed' else 'completed' end"),
    jobRow('poll', 'deliver_message', 't', "'completed'"),
    `${jobRow('reply', 'deliver_message', `${replyAt} + 5`, "'completed'")} where ${replied}`,
    `${jobRow('reminder', 'deliver_message', 't + 7200', "'completed'")} where not (${replied})`,
  ].map((select) => `insert into jobs ${jobColumns} ${grid} ${select}`);
  const nextPrompts = `insert into jobs ${jobColumns} ${grid}
    ${jobRow('next', 'daily_prompt', 't + 86400 - 600', "'pending'")} where d = ${shape.days - 1}`;

  const callRow = (purpose: string, at: string) =>
    `select ${participant}, '${purpose}', 'gpt-4o-mini', 'api.openai.com', 0.1, 'prompts/feedback.md', 'v3',
      900 + r, 60 + r % 90, 960 + r + r % 90, 400 + r, case when r % 97 = 0 then 'error' else 'success' end, ${seed.instant(at)} from grid`;
  const calls = [
    callRow('habit-prompt', 't - 60'),
    `${callRow('turn', `${replyAt} + 1`)} where ${replied}`,
    `${callRow('turn', `${replyAt} + 4`)} where ${replied}`,
  ].map(
    (select) =>
      `insert into llm_calls (participant_id, purpose, model, provider_host, temperature, prompt_file, prompt_version, prompt_tokens, completion_tokens, total_tokens, latency_ms, outcome, created_at) ${grid} ${select}`,
  );

  // The profile's counters as the engine keeps them: prompts sent, and Done answers (counted per participant in one
  // pass: a correlated count per participant would go through the events' type index).
  const counts = `select participant_id,
      sum(case when type = 'prompt-sent' then 1 else 0 end) as sent,
      sum(case when type = 'poll-answered' and ${seed.eventKind} = 'success-counted' then 1 else 0 end) as done
    from events e group by participant_id`;
  const flowStates = `insert into flow_states (participant_id, flow_type, current_state, state_data, created_at, updated_at)
    select id, 'conversation', 'CONVERSATION_ACTIVE',
      ${seed.object(
        "'conversationState'",
        "case when substr(id, 5, 2) = '00' then 'INTAKE' else 'FEEDBACK' end",
        "'engagementState'",
        "case when substr(id, 6, 1) = '7' then 'idle' else 'active' end",
        "'userProfile'",
        seed.objectText(
          "'habit_domain'",
          "'walking'",
          "'prompt_anchor'",
          "'after breakfast'",
          "'intensity'",
          "'normal'",
          "'total_prompts'",
          'coalesce(counts.sent, 0)',
          "'success_count'",
          'coalesce(counts.done, 0)',
        ),
      )},
      enrolled_at, enrolled_at
    from participants left join (${counts}) counts on counts.participant_id = participants.id`;

  return [participants, ...transcript, ...events, statusChanges, ...jobs, nextPrompts, ...calls, flowStates];
}
