/** The dashboard's pages, rendered on the server. Routes gather the data; these functions only lay it out. */

import type { Participant } from '../domain/participant.ts';
import type { Permission } from '../domain/permissions.ts';
import { IMPORT_COLUMNS } from '../research/import/import-input.ts';
import { html, type SafeHtml } from './html.ts';

export const SUB_STATES = ['INTAKE', 'FEEDBACK'] as const;

export interface PageContext {
  csrfToken: string;
  /** Shows the sign-out button. */
  signedIn: boolean;
  clock: { now: Date; manual: boolean };
  /** The enabled channels, the default first. */
  channels: readonly string[];
  flash?: string;
  /** Who is signed in: the navigation offers what they may open. Absent on pages built without a request. */
  staff?: { label: string; permissions: ReadonlySet<Permission> };
}

export function csrfField(context: Pick<PageContext, 'csrfToken'>): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${context.csrfToken}">`;
}

export function layout(title: string, context: PageContext | undefined, body: SafeHtml): string {
  const nav = context
    ? html`<header class="top"><nav aria-label="Dashboard"><a href="/dashboard">Participants</a> <a href="/dashboard/enroll">Enroll</a> <a href="/dashboard/overview">Overview</a> <a href="/dashboard/adherence">Adherence</a> <a href="/dashboard/export">Export</a> <a href="/dashboard/evaluations">Evaluations</a> <a href="/dashboard/alerts">Alerts <span id="alert-count" class="alert-count" data-live="/dashboard/alerts/count" aria-label="open alerts"></span></a>${staffLinks(context)}</nav>
${clockPanel(context)}
${context.signedIn ? html`<form method="post" action="/dashboard/logout" class="inline sign-out">${csrfField(context)}<button type="submit">Sign out</button></form>` : ''}</header>`
    : '';
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${context?.csrfToken ?? ''}">
<title>${title} \u00b7 PromptPipe</title><link rel="icon" href="/dashboard/assets/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="/dashboard/assets/dashboard.css"></head>
<body>${nav}<main id="main"><h1>${title}</h1>${context?.flash ? html`<p class="flash" role="status">${context.flash}</p>` : ''}${body}</main>
<script src="/dashboard/assets/dashboard.js" defer></script></body></html>`.value;
}

/** The account pages (tokens; users and the audit trail for admins), one link so the header stays one line. */
function staffLinks(context: PageContext): SafeHtml {
  return context.staff && context.signedIn ? html` <a href="/dashboard/tokens">Staff</a>` : html``;
}

function clockPanel(context: PageContext): SafeHtml {
  const now = html`<span id="study-time">Study time: <strong>${context.clock.now.toISOString().slice(0, 16).replace('T', ' ')} UTC</strong></span>`;
  if (!context.clock.manual) return html`<div class="clock">${now}</div>`;
  return html`<div class="clock">${now} (manual clock)
<form method="post" action="/dashboard/clock" class="inline">${csrfField(context)}<button name="advance" value="hour">+1 hour</button> <button name="advance" value="day">+1 day</button>
<label>to <input type="datetime-local" name="to" aria-label="Advance the clock to"></label> <button name="advance" value="to">Go</button></form></div>`;
}

export function localTime(date: Date | undefined, timezone: string): string {
  if (!date) return '—';
  const zone = timezone || 'UTC';
  try {
    return `${date.toLocaleString('en-GB', { timeZone: zone, dateStyle: 'medium', timeStyle: 'short' })} (${zone})`;
  } catch {
    return date.toISOString();
  }
}

export function deletePage(context: PageContext, participant: Participant, transcriptEntries: number): string {
  return layout(
    `Delete ${participant.name || participant.id}?`,
    context,
    html`<div class="card"><p id="delete-warning">Deleting removes this participant, their conversation state, profile, schedules and every pending
timer and message. They receive an unregister notice. ${transcriptEntries} transcript entries are kept as study data unless you also tick "purge".</p>
<form method="post" action="/dashboard/participants/${participant.id}/delete">${csrfField(context)}
<label><input type="checkbox" name="purge" value="true"> Also purge the transcript (cannot be undone)</label>
<button type="submit" class="danger">Yes, delete</button> <a href="/dashboard/participants/${participant.id}">Cancel</a></form></div>`,
  );
}

export function enrollPage(context: PageContext, error?: string): string {
  return layout(
    'Enroll',
    context,
    html`${error ? html`<p class="error" role="alert">${error}</p>` : ''}<form method="post" action="/dashboard/enroll" class="card">${csrfField(context)}
<label for="phone">Phone number</label><input id="phone" name="phone_number" required inputmode="tel">
<label for="name">Name</label><input id="name" name="name">
<label for="timezone">Time zone (IANA)</label><input id="timezone" name="timezone" placeholder="America/Toronto">
<label for="background">Background</label><input id="background" name="background">
<label for="language">Language (BCP 47, e.g. en, es, pt-BR; empty = the study default)</label><input id="language" name="language" placeholder="en">
<label for="channel">Channel</label><select id="channel" name="channel">${context.channels.map((channel) => html`<option value="${channel}">${channel}</option>`)}</select>
<button type="submit">Enroll</button></form>
<form method="post" action="/dashboard/enroll/csv" class="card">${csrfField(context)}
<h2>Enroll many (CSV)</h2><p>Header line with any of <code>${IMPORT_COLUMNS.join(',')}</code> (<code>phone_number</code> required). Every row is checked first; nothing is enrolled while a row is invalid unless you tick "partial". Greetings are paced (<code>ENROLL_GREETING_RATE</code>).</p>
<label for="csv-file">CSV file</label><input id="csv-file" type="file" accept=".csv,text/csv" data-fills="csv">
<label for="csv">CSV text</label><textarea id="csv" name="csv" rows="6"></textarea>
<label><input type="checkbox" name="partial" value="true"> Partial: enroll the valid rows even if others are invalid</label><button type="submit">Enroll all</button></form>`,
  );
}
