/** The adherence grid's HTML: one row per participant, one cell per local study day, sortable, keyset-paged. */
import { PARTICIPANT_STATUSES } from '../domain/participant.ts';
import type { AdherenceKey, AdherencePage, AdherenceSort } from '../store/ports/roster-reads.ts';
import { adherenceCells, CELL_WORDS, type CellState } from './adherence-cells.ts';
import { layout, type PageContext } from './dashboard-pages.ts';
import { html, type SafeHtml } from './html.ts';

export interface AdherenceView {
  sort: AdherenceSort;
  status: string;
  /** 14 or 30. */
  days: number;
  /** The local dates of the columns, oldest first. */
  dates: string[];
  /** Whether this is a later page (a First link is shown). */
  paged: boolean;
}

/** A key in a page link: `<sort value>,<id>`, split at the last comma (a name may contain commas, an id does not). */
export function formatAdherenceKey(key: AdherenceKey): string {
  return `${key.value},${key.id}`;
}

export function parseAdherenceKey(text: string): AdherenceKey | undefined {
  const comma = text.lastIndexOf(',');
  if (comma < 0 || comma === text.length - 1) return undefined;
  return { value: text.slice(0, comma), id: text.slice(comma + 1) };
}

/** Symbols as entities: the bundle stays ASCII (scripts/build.ts). */
const SYMBOLS: Record<CellState, SafeHtml | string> = {
  done: html`&#10003;`,
  answered: html`&#9679;`,
  'no-answer': html`&#10007;`,
  paused: html`&#8214;`,
  'not-sent': html`&#8211;`,
  blank: '',
};

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

function dateHeading(date: string): SafeHtml {
  const weekday = WEEKDAYS[new Date(`${date}T00:00:00Z`).getUTCDay()] ?? '';
  return html`<th scope="col" class="date" title="${date}"><small>${weekday}</small><br>${date.slice(8)}</th>`;
}

function percent(done: number, sent: number): string {
  return sent === 0 ? '—' : `${Math.round((done / sent) * 100)} %`;
}

export function adherencePage(context: PageContext, view: AdherenceView, result: AdherencePage): string {
  const link = (changes: Record<string, string>) =>
    `/dashboard/adherence?${new URLSearchParams({ sort: view.sort, status: view.status, days: String(view.days), ...changes })}`;
  const sortHeader = (sort: AdherenceSort, label: string, extra = '') =>
    html`<th scope="col" ${view.sort === sort ? html`aria-sort="${sort === 'enrolled' ? 'descending' : 'ascending'}"` : ''} class="${extra}"><a href="${link({ sort })}">${label}</a></th>`;
  const rows = result.rows.map((row) => {
    const participant = row.participant;
    const cells = adherenceCells(row, view.dates, context.clock.now).map(
      (cell) =>
        html`<td class="day ${cell.state}" title="${cell.localDate}: ${cell.description || 'not enrolled yet'}">${SYMBOLS[cell.state]}</td>`,
    );
    return html`<tr><th scope="row"><a href="/dashboard/participants/${participant.id}">${participant.name || participant.id}</a><br><small>${participant.status}</small></th>
<td class="adherence" title="Done on ${row.promptsDone} of ${row.promptsSent} prompts; answered ${row.promptsAnswered}">${percent(row.promptsDone, row.promptsSent)}<br><small>${row.promptsDone} / ${row.promptsSent}</small></td>
<td class="enrolled">${participant.enrolledAt.toISOString().slice(0, 10)}</td>${cells}</tr>`;
  });
  const option = (value: string, label: string, selected: string) =>
    html`<option value="${value}" ${value === selected ? html`selected` : ''}>${label}</option>`;
  const legend = (['done', 'answered', 'no-answer', 'not-sent', 'paused'] as const).map(
    (state) => html`<li><span class="day ${state}">${SYMBOLS[state]}</span> ${CELL_WORDS[state]}</li>`,
  );
  const from = view.dates[0] ?? '';
  const to = view.dates.at(-1) ?? '';
  return layout(
    'Adherence',
    context,
    html`<form method="get" action="/dashboard/adherence" class="filters"><input type="hidden" name="sort" value="${view.sort}">
<label>Status <select name="status">${option('', 'any', view.status)}${PARTICIPANT_STATUSES.map((status) => option(status, status, view.status))}</select></label>
<label>Days <select name="days">${option('14', 'last 14 days', String(view.days))}${option('30', 'last 30 days', String(view.days))}</select></label>
<button type="submit">Show</button></form>
<p>${result.total} participant(s). Each cell is the participant's own local date, ${from} to ${to}; adherence is Done &divide; prompts sent over the whole study. Sort by a column's heading.</p>
<ul class="legend" aria-label="Legend">${legend}</ul>
<div class="table-wrap"><table id="adherence" class="adherence-grid"><thead><tr>${sortHeader('name', 'Participant')}${sortHeader('adherence', 'Adherence')}${sortHeader('enrolled', 'Enrolled')}${view.dates.map(dateHeading)}</tr></thead>
<tbody>${rows}</tbody></table></div>
<nav aria-label="Pages" class="pager">${view.paged ? html`<a href="${link({})}" rel="first">First</a>` : ''} ${result.next ? html`<a href="${link({ after: formatAdherenceKey(result.next) })}" rel="next">Next</a>` : ''}</nav>`,
  );
}
