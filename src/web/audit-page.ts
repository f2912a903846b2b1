/** `/dashboard/audit`: the audit trail, newest first, filtered by actor, action, participant and dates (admins). */
import type { AuditEntry, AuditFilter } from '../store/staff-store.ts';
import { layout, type PageContext } from './dashboard-pages.ts';
import { html } from './html.ts';

export const AUDIT_PAGE_ROWS = 200;

export interface AuditQuery {
  actor?: string;
  action?: string;
  participant?: string;
  from?: string;
  to?: string;
}

/** The filter the form asked for; a date that does not parse is ignored rather than failing the page. */
export function auditFilterOf(query: AuditQuery): AuditFilter {
  const date = (value: string | undefined, endOfDay: boolean): Date | undefined => {
    if (!value || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
    const parsed = new Date(`${value}T00:00:00Z`);
    if (Number.isNaN(parsed.getTime())) return undefined;
    return endOfDay ? new Date(parsed.getTime() + 86_400_000) : parsed;
  };
  const from = date(query.from, false);
  const to = date(query.to, true);
  return {
    ...(query.actor?.trim() ? { actor: query.actor.trim() } : {}),
    ...(query.action?.trim() ? { action: query.action.trim() } : {}),
    ...(query.participant?.trim() ? { participantId: query.participant.trim() } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
  };
}

export function auditPage(context: PageContext, query: AuditQuery, entries: readonly AuditEntry[]): string {
  const rows = entries.map(
    (
      entry,
    ) => html`<tr><td>${entry.at.toISOString().replace('T', ' ').slice(0, 19)}</td><td>${entry.actor}</td><td><code>${entry.action}</code>${entry.detail ? html`<br><small>${entry.detail}</small>` : ''}</td>
<td>${entry.participantId ? html`<a href="/dashboard/participants/${entry.participantId}">${entry.participantId}</a>` : ''}</td><td>${entry.address ?? ''}</td><td class="outcome-${entry.outcome}">${entry.outcome}${entry.status ? ` (${entry.status})` : ''}</td></tr>`,
  );
  return layout(
    'Audit trail',
    context,
    html`<form method="get" action="/dashboard/audit" class="card filters">
<label for="actor">Actor</label><input id="actor" name="actor" value="${query.actor ?? ''}">
<label for="action">Action</label><input id="action" name="action" value="${query.action ?? ''}">
<label for="participant">Participant id</label><input id="participant" name="participant" value="${query.participant ?? ''}">
<label for="from">From</label><input id="from" name="from" type="date" value="${query.from ?? ''}">
<label for="to">To</label><input id="to" name="to" type="date" value="${query.to ?? ''}">
<button type="submit">Filter</button></form>
<p>The newest ${AUDIT_PAGE_ROWS} matching entries. The whole trail: <a href="/export/audit.csv">audit.csv</a>.</p>
<div class="table-wrap"><table><thead><tr><th>When (UTC)</th><th>Who</th><th>What</th><th>Participant</th><th>From</th><th>Outcome</th></tr></thead><tbody>${rows}</tbody></table></div>`,
  );
}
