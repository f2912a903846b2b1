/** The roster page's HTML: filters, the table of participants and the keyset pager. */
import { PARTICIPANT_STATUSES } from '../domain/participant.ts';
import type { AdherenceAlertFilter, RosterKey, RosterPage, RosterRow } from '../store/ports/roster-reads.ts';
import { layout, type PageContext, SUB_STATES } from './dashboard-pages.ts';
import { html, type SafeHtml } from './html.ts';
import { armCell, armFilterControl, armHeader, type RosterArms } from './roster-arms.ts';

export interface RosterQuery {
  search: string;
  status: string;
  subState: string;
  idle: string;
  channel: string;
  /** `any`, `missed-prompts`, `silent-days` (an unresolved adherence alert), or '' (no filter). */
  adherenceAlert: AdherenceAlertFilter | '';
  /** The page's number, carried by the pager's links for display. */
  page: number;
  /** A trial's arm ('' = any; see `roster-arms.ts`). */
  arm?: string;
}

/** A row's key in a page link: `<enrolment ISO time>,<id>` (the time has no comma). */
export function formatRosterKey(key: RosterKey): string {
  return `${key.enrolledAt.toISOString()},${key.id}`;
}

/** The key of a page link, or undefined when `text` is not one. */
export function parseRosterKey(text: string): RosterKey | undefined {
  const comma = text.indexOf(',');
  if (comma < 0) return undefined;
  const enrolledAt = new Date(text.slice(0, comma));
  const id = text.slice(comma + 1);
  return Number.isNaN(enrolledAt.getTime()) || id === '' ? undefined : { enrolledAt, id };
}

/** When the next prompt is, in the participant's zone: the time on one line, the zone under it (the column stays narrow). */
function nextPrompt(date: Date | undefined, timezone: string): SafeHtml | string {
  if (!date) return '—';
  const zone = timezone || 'UTC';
  try {
    const time = date.toLocaleString('en-GB', { timeZone: zone, dateStyle: 'medium', timeStyle: 'short' });
    return html`${time}<br><small>${zone}</small>`;
  } catch {
    return date.toISOString();
  }
}

function row(context: PageContext, entry: RosterRow, trial: RosterArms | undefined): SafeHtml {
  const participant = entry.participant;
  const last = entry.lastMessage;
  return html`<tr><td><a href="/dashboard/participants/${participant.id}">${participant.name || participant.id}</a><br><small>${participant.phoneNumber}</small></td>
${armCell(trial, participant.id)}<td>${participant.status}${entry.idle ? ' \u00b7 idle' : ''}${entry.adherenceAlert ? html`<br><a class="adherence-alert" href="/dashboard/alerts#${entry.adherenceAlert.id}" title="Adherence alert: ${entry.adherenceAlert.rule}">adherence alert</a>` : ''}</td><td>${entry.conversationState ?? '\u2014'}</td><td>${participant.channel || context.channels[0]}</td><td class="language">${participant.language ?? '\u2014'}</td>
<td>${nextPrompt(entry.nextPromptAt, participant.timezone)}</td>
<td>${last ? html`<span class="clip">${last.content}</span><br><small>${last.at.toISOString().slice(0, 16).replace('T', ' ')} UTC</small>` : '\u2014'}</td>
<td class="counts" title="${entry.promptsSent} prompts sent, answered on ${entry.promptsAnswered} days, Done on ${entry.promptsDone}">${entry.promptsSent} / ${entry.promptsAnswered} / <span class="success-count">${entry.promptsDone}</span></td></tr>`;
}

export function participantsPage(
  context: PageContext,
  query: RosterQuery,
  result: RosterPage & { pageSize: number },
  trial?: RosterArms,
): string {
  const option = (value: string, label: string, selected: string) =>
    html`<option value="${value}" ${value === selected ? html`selected` : ''}>${label}</option>`;
  const pages = Math.max(1, Math.ceil(result.total / result.pageSize));
  const page = Math.min(Math.max(1, query.page), pages);
  const link = (position: Record<string, string>, number: number) =>
    `/dashboard?${new URLSearchParams({ search: query.search, status: query.status, sub_state: query.subState, idle: query.idle, channel: query.channel, adherence_alert: query.adherenceAlert, ...(query.arm ? { arm: query.arm } : {}), ...position, page: String(number) })}`;
  const first = result.rows[0]?.participant;
  const last = result.rows.at(-1)?.participant;
  const keyOf = (participant: { enrolledAt: Date; id: string }) =>
    formatRosterKey({ enrolledAt: participant.enrolledAt, id: participant.id });
  const newer =
    result.hasNewer && first
      ? html`<a href="${link({}, 1)}" rel="first">First</a> <a href="${link({ before: keyOf(first) }, page - 1)}" rel="prev">Previous</a>`
      : '';
  const older =
    result.hasOlder && last
      ? html`<a href="${link({ after: keyOf(last) }, page + 1)}" rel="next">Next</a> <a href="${link({ last: '1' }, pages)}" rel="last">Last</a>`
      : '';
  return layout(
    'Participants',
    context,
    html`<form method="get" action="/dashboard" class="filters" role="search">
<label>Search <input type="search" name="search" value="${query.search}" placeholder="name or phone digits"></label>
<label>Status <select name="status">${option('', 'any', query.status)}${PARTICIPANT_STATUSES.map((status) => option(status, status, query.status))}</select></label>
<label>Sub-state <select name="sub_state">${option('', 'any', query.subState)}${SUB_STATES.map((state) => option(state, state, query.subState))}</select></label>
<label>Idle <select name="idle">${option('', 'any', query.idle)}${option('yes', 'idle', query.idle)}${option('no', 'not idle', query.idle)}</select></label>
<label>Channel <select name="channel">${option('', 'any', query.channel)}${context.channels.map((channel) => option(channel, channel, query.channel))}</select></label>
${armFilterControl(query.arm ?? '', trial)}
<label>Adherence alert <select name="adherence_alert">${option('', 'any or none', query.adherenceAlert)}${option('any', 'unresolved, any rule', query.adherenceAlert)}${option('missed-prompts', 'unresolved: prompts unanswered', query.adherenceAlert)}${option('silent-days', 'unresolved: days without a message', query.adherenceAlert)}</select></label>
<button type="submit">Filter</button></form>
<p>${result.total} participant(s)</p>
<div class="table-wrap"><table id="roster"><thead><tr><th scope="col">Participant</th>${armHeader(trial)}<th scope="col">Status</th><th scope="col">Sub-state</th><th scope="col">Channel</th><th scope="col">Language</th><th scope="col">Next prompt (local)</th><th scope="col">Last message</th><th scope="col" class="counts"><abbr title="Daily prompts sent / days answered / days answered Done">Sent / answered / done</abbr></th></tr></thead>
<tbody>${result.rows.map((entry) => row(context, entry, trial))}</tbody></table></div>
<nav aria-label="Pages" class="pager">${newer} Page ${page} of ${pages} ${older}</nav>`,
  );
}
