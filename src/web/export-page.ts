/**
 * `/dashboard/export`: the study team chooses tables, format, participants, a start date and pseudonymisation; the
 * page answers with one download link per table, each a `GET /export/<table>.<format>?…` that the signed-in session
 * may fetch (auth.ts), so nobody has to paste the API token into a terminal.
 */
import type { Participant } from '../domain/participant.ts';
import { exportTables } from '../research/export/export-tables.ts';
import { EXPORT_FORMATS, type ExportFormat, type ExportTableName } from '../research/export/export-types.ts';
import { layout, type PageContext } from './dashboard-pages.ts';
import { html, type SafeHtml } from './html.ts';

export interface ExportChoice {
  tables: ExportTableName[];
  format: ExportFormat;
  participantIds: string[];
  /** `YYYY-MM-DD` as typed, or empty for everything. */
  since: string;
  pseudonymize: boolean;
}

export interface ExportPageData {
  choice: ExportChoice;
  participants: readonly Participant[];
  /** Without `EXPORT_PSEUDONYM_KEY` the server cannot pseudonymise: the box is disabled and says why. */
  pseudonymKeySet: boolean;
  /** The links, once a valid choice was submitted. */
  show: boolean;
  error?: string | undefined;
}

/** The API path of one table's file under the choice (the same query parameters as `GET /export/…` documents). */
export function exportHref(table: ExportTableName, choice: ExportChoice): string {
  const query = new URLSearchParams();
  if (choice.participantIds.length > 0) query.set('participant', choice.participantIds.join(','));
  if (choice.since) query.set('since', choice.since);
  if (choice.pseudonymize) query.set('pseudonymize', 'true');
  const search = query.toString();
  return `/export/${table}.${choice.format}${search ? `?${search}` : ''}`;
}

function tableFields(choice: ExportChoice): SafeHtml {
  return html`<fieldset><legend>Tables</legend>${exportTables.map(
    (table) =>
      html`<label class="choice"><input type="checkbox" name="table" value="${table.name}" ${choice.tables.includes(table.name) ? html`checked` : ''}> <code>${table.name}</code> <span class="hint">${table.description}</span></label>`,
  )}</fieldset>`;
}

function formatFields(choice: ExportChoice): SafeHtml {
  const labels: Record<ExportFormat, string> = {
    csv: 'CSV (spreadsheets, R, pandas)',
    jsonl: 'JSON Lines (exact text and nested values)',
  };
  return html`<fieldset><legend>Format</legend>${EXPORT_FORMATS.map(
    (format) =>
      html`<label class="choice"><input type="radio" name="format" value="${format}" ${choice.format === format ? html`checked` : ''}> ${labels[format]}</label>`,
  )}</fieldset>`;
}

function participantField(choice: ExportChoice, participants: readonly Participant[]): SafeHtml {
  const options = participants.map(
    (participant) =>
      html`<option value="${participant.id}" ${choice.participantIds.includes(participant.id) ? html`selected` : ''}>${participant.name || '(no name)'} &middot; ${participant.phoneNumber}</option>`,
  );
  return html`<label for="export-participants">Participants <span class="hint">(none selected: everyone; Ctrl or &#8984; to select several)</span></label>
<select id="export-participants" name="participant" multiple size="${Math.min(8, Math.max(3, participants.length))}">${options}</select>`;
}

function pseudonymField(choice: ExportChoice, keySet: boolean): SafeHtml {
  if (!keySet) {
    return html`<label class="choice"><input type="checkbox" name="pseudonymize" value="true" disabled> Pseudonymise</label>
<p class="note" id="pseudonym-note">Pseudonymising is not available: <code>EXPORT_PSEUDONYM_KEY</code> is not set on this server. Set it (a long random secret, kept for later exports) and restart to hash phone numbers and drop names.</p>`;
  }
  return html`<label class="choice"><input type="checkbox" name="pseudonymize" value="true" ${choice.pseudonymize ? html`checked` : ''}> Pseudonymise: phone numbers become keyed hashes (<code>pn_&hellip;</code>, the same in every export), names are dropped, free text is kept</label>`;
}

function downloads(choice: ExportChoice): SafeHtml {
  const links = choice.tables.map((table) => {
    const file = `${table}.${choice.format}`;
    return html`<li><a href="${exportHref(table, choice)}" download="${file}">${file}</a></li>`;
  });
  const who = choice.participantIds.length > 0 ? `${choice.participantIds.length} participant(s)` : 'Every participant';
  const since = choice.since ? `, since ${choice.since} (UTC)` : '';
  return html`<section class="card" id="downloads" aria-labelledby="downloads-title"><h2 id="downloads-title">Downloads</h2>
<p>${who}${since}${choice.pseudonymize ? ', pseudonymised' : ''}. Each file is written as you download it, so it is up to date to the second.</p>
<ul class="downloads">${links}</ul></section>`;
}

export function exportPage(context: PageContext, data: ExportPageData): string {
  const { choice } = data;
  return layout(
    'Export',
    context,
    html`${data.error ? html`<p class="error" role="alert">${data.error}</p>` : ''}
<form method="get" action="/dashboard/export" class="card export-form">
${tableFields(choice)}${formatFields(choice)}
${participantField(choice, data.participants)}
<label for="export-since">Since <span class="hint">(a UTC date; empty: from the start)</span></label><input id="export-since" name="since" type="date" value="${choice.since}">
${pseudonymField(choice, data.pseudonymKeySet)}
<p><button type="submit" name="show" value="1">Show download links</button></p></form>
${data.show && !data.error ? downloads(choice) : ''}
<p>Study statistics as JSON: <a href="/stats">/stats</a>. The same files from a script: <code>GET /export/&lt;table&gt;.&lt;format&gt;</code> with the API token (see docs/api.md).</p>`,
  );
}
