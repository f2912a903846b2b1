/** The roster page's HTML: filters, the table of participants and the pager. */
import { PARTICIPANT_STATUSES } from '../domain/participant.ts';
import type { RosterRow } from '../store/store.ts';
import { layout, localTime, type PageContext, SUB_STATES } from './dashboard-pages.ts';
import { html } from './html.ts';

function profileCounts(raw: string | undefined): { total: number; success: number } {
  try {
    const profile = JSON.parse(raw ?? '{}') as { total_prompts?: unknown; success_count?: unknown };
    return { total: Number(profile.total_prompts) || 0, success: Number(profile.success_count) || 0 };
  } catch {
    return { total: 0, success: 0 };
  }
}

export interface RosterQuery {
  search: string;
  status: string;
  subState: string;
  idle: string;
  channel: string;
  page: number;
}

export function participantsPage(
  context: PageContext,
  query: RosterQuery,
  result: { rows: RosterRow[]; total: number; pageSize: number },
): string {
  const option = (value: string, label: string, selected: string) =>
    html`<option value="${value}" ${value === selected ? html`selected` : ''}>${label}</option>`;
  const rows = result.rows.map((row) => {
    const counts = profileCounts(row.userProfile);
    const participant = row.participant;
    return html`<tr><td><a href="/dashboard/participants/${participant.id}">${participant.name || participant.id}</a><br><small>${participant.phoneNumber}</small></td>
<td>${participant.status}${row.idle ? ' · idle' : ''}</td><td>${row.conversationState ?? '—'}</td><td>${participant.channel || context.channels[0]}</td><td class="language">${participant.language ?? '—'}</td>
<td>${localTime(row.nextPromptAt, participant.timezone)}</td>
<td>${row.lastMessage ? html`<span class="clip">${row.lastMessage.content}</span><br><small>${row.lastMessage.at.toISOString().slice(0, 16).replace('T', ' ')} UTC</small>` : '—'}</td>
<td>${row.promptsSent} / ${row.pollsAnswered} / <span class="success-count">${counts.success}</span></td></tr>`;
  });
  const pages = Math.max(1, Math.ceil(result.total / result.pageSize));
  const link = (page: number) =>
    `/dashboard?${new URLSearchParams({ search: query.search, status: query.status, sub_state: query.subState, idle: query.idle, channel: query.channel, page: String(page) })}`;
  return layout(
    'Participants',
    context,
    html`<form method="get" action="/dashboard" class="filters" role="search">
<label>Search <input type="search" name="search" value="${query.search}" placeholder="name or phone"></label>
<label>Status <select name="status">${option('', 'any', query.status)}${PARTICIPANT_STATUSES.map((status) => option(status, status, query.status))}</select></label>
<label>Sub-state <select name="sub_state">${option('', 'any', query.subState)}${SUB_STATES.map((state) => option(state, state, query.subState))}</select></label>
<label>Idle <select name="idle">${option('', 'any', query.idle)}${option('yes', 'idle', query.idle)}${option('no', 'not idle', query.idle)}</select></label>
<label>Channel <select name="channel">${option('', 'any', query.channel)}${context.channels.map((channel) => option(channel, channel, query.channel))}</select></label>
<button type="submit">Filter</button></form>
<p>${result.total} participant(s)</p>
<div class="table-wrap"><table><thead><tr><th scope="col">Participant</th><th scope="col">Status</th><th scope="col">Sub-state</th><th scope="col">Channel</th><th scope="col">Language</th><th scope="col">Next prompt (local)</th><th scope="col">Last message</th><th scope="col">Sent / answered / done</th></tr></thead>
<tbody>${rows}</tbody></table></div>
<nav aria-label="Pages" class="pager">${query.page > 1 ? html`<a href="${link(query.page - 1)}">Previous</a>` : ''} Page ${query.page} of ${pages} ${query.page < pages ? html`<a href="${link(query.page + 1)}">Next</a>` : ''}</nav>`,
  );
}
