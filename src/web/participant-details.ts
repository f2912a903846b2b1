/**
 * The participant page's readable sections: the profile as labelled fields, each schedule as a sentence with its next
 * prompt, the pending timers and the recent events, every time in the participant's zone. The stored JSON stays one
 * click away ("raw data") for the questions these summaries do not answer.
 */
import type { UserProfile } from '../domain/profile.ts';
import { type ScheduleInfo, ScheduleType } from '../scheduling/schedule-registry.ts';
import type { Job, StoredEvent } from '../store/store.ts';
import { html, type SafeHtml } from './html.ts';
import { zonedTime } from './zoned-time.ts';

/** Where times are shown: the participant's zone and the study clock's now (for the year rule of zonedTime). */
export interface TimeSetting {
  zone: string;
  now: Date;
}

function rawData(value: unknown): SafeHtml {
  return html`<details class="raw"><summary>raw data</summary><pre>${JSON.stringify(value, null, 2)}</pre></details>`;
}

const PROFILE_FIELDS: readonly [keyof UserProfile, string][] = [
  ['habit_domain', 'Habit'],
  ['motivational_frame', 'Motivation'],
  ['preferred_time', 'Preferred time'],
  ['prompt_anchor', 'Anchor'],
  ['additional_info', 'Additional information'],
  ['intensity', 'Intensity'],
  ['last_successful_prompt', 'Last successful prompt'],
  ['last_barrier', 'Last barrier'],
  ['last_tweak', 'Last tweak'],
  ['last_motivator', 'Last motivator'],
];

function instantOrNone(text: string | undefined, time: TimeSetting): string {
  if (!text) return '—';
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? text : zonedTime(date, time.zone, time.now);
}

export function profileSection(profile: UserProfile | null, time: TimeSetting): SafeHtml {
  if (!profile) return html`<p>No profile yet: the coach saves one during intake.</p>`;
  const fields = PROFILE_FIELDS.map(
    ([key, label]) => html`<dt>${label}</dt><dd data-field="${key}">${String(profile[key] ?? '') || '\u2014'}</dd>`,
  );
  const tone = profile.tone.tone_tags.length > 0 ? profile.tone.tone_tags.join(', ') : '—';
  return html`<dl class="profile">${fields}
<dt>Done / prompts</dt><dd data-field="success_total">${profile.success_count} / ${profile.total_prompts}</dd>
<dt>Tone</dt><dd data-field="tone">${tone}</dd>
<dt>Updated</dt><dd data-field="updated_at">${instantOrNone(profile.updated_at, time)}</dd></dl>
${rawData(profile)}`;
}

/** "daily at 09:00 Europe/Berlin (next: Tue 3 Mar, 08:50)": the next prompt is the schedule's pending job. */
export function describeSchedule(schedule: ScheduleInfo, pendingJobs: readonly Job[], time: TimeSetting): string {
  const when =
    schedule.type === ScheduleType.FIXED
      ? `daily at ${schedule.fixed_time ?? '?'}`
      : `daily at a random time between ${schedule.random_start_time ?? '?'} and ${schedule.random_end_time ?? '?'}`;
  const job = pendingJobs.find((pending) => pending.id === schedule.timer_id);
  // The schedule's own zone: "09:00" means 09:00 there, even when the page shows the participant's.
  const next = job ? ` (next: ${zonedTime(job.runAt, schedule.timezone, time.now)})` : ' (no prompt pending)';
  return `${when} ${schedule.timezone}${next}`;
}

export function schedulesSection(schedules: readonly ScheduleInfo[], pendingJobs: readonly Job[], time: TimeSetting) {
  const scheduleItems = schedules.map(
    (schedule) => html`<li class="schedule">${describeSchedule(schedule, pendingJobs, time)}</li>`,
  );
  const timerItems = pendingJobs.map(
    (job) =>
      html`<li class="timer">${job.kind.replaceAll('_', ' ')}: due <time datetime="${job.runAt.toISOString()}">${zonedTime(job.runAt, time.zone, time.now)}</time></li>`,
  );
  return html`<h3>Daily prompt</h3>${scheduleItems.length > 0 ? html`<ul>${scheduleItems}</ul>` : html`<p>No schedule yet.</p>`}
<h3>Pending timers (${time.zone})</h3>${timerItems.length > 0 ? html`<ul>${timerItems}</ul>` : html`<p>None.</p>`}
${schedules.length > 0 ? rawData(schedules) : ''}`;
}

/** An ISO 8601 instant as the models and the store write them (`2026-03-02T14:00:00.000Z`). */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A value as words: instants in the participant's zone, lists joined by commas, objects as "key: value" pairs in
 * parentheses, one level deep (deeper ones as JSON; the whole is behind "raw data").
 */
function readable(value: unknown, time: TimeSetting, depth: number): string {
  if (Array.isArray(value)) return value.map((item) => readable(item, time, depth + 1)).join(', ');
  if (value !== null && typeof value === 'object') {
    return depth > 0 ? JSON.stringify(value) : `(${pairs(value as Record<string, unknown>, time, depth + 1)})`;
  }
  if (typeof value === 'string' && INSTANT.test(value)) return instantOrNone(value, time);
  return String(value);
}

function pairs(data: Record<string, unknown>, time: TimeSetting, depth: number): string {
  return Object.entries(data)
    .filter(([, value]) => value !== null && value !== undefined && value !== '')
    .map(([key, value]) => `${key.replaceAll('_', ' ')}: ${readable(value, time, depth)}`)
    .join('; ');
}

/** An event's details in a line, cut at 200 characters. */
function eventSummary(data: Record<string, unknown>, time: TimeSetting): string {
  const text = pairs(data, time, 0);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

export function eventsTable(events: readonly StoredEvent[], time: TimeSetting): SafeHtml {
  if (events.length === 0) return html`<p>No events yet.</p>`;
  const rows = events.map(
    (event) =>
      html`<tr><td><time datetime="${event.createdAt.toISOString()}">${zonedTime(event.createdAt, time.zone, time.now)}</time></td><td><code>${event.type}</code></td><td>${eventSummary(event.data, time)}${rawData(event.data)}</td></tr>`,
  );
  return html`<div class="table-wrap"><table id="events"><thead><tr><th scope="col">Time (${time.zone})</th><th scope="col">Event</th><th scope="col">Details</th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
}
