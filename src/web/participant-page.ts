/** `/dashboard/participants/<id>`: one participant's details, actions, live conversation and recent events. */
import type { Participant } from '../domain/participant.ts';
import type { ParticipantStateView } from '../participants/participant-service.ts';
import type { StoredEvent, TranscriptEntry } from '../store/ports/conversation-store.ts';
import { csrfField, layout, type PageContext } from './dashboard-pages.ts';
import { html, type SafeHtml } from './html.ts';
import { eventsTable, profileSection, schedulesSection, type TimeSetting } from './participant-details.ts';
import { dashboardEntry } from './transcript-view.ts';
import { participantTimeZone } from './zoned-time.ts';

export interface ParticipantPageData {
  participant: Participant;
  state: ParticipantStateView;
  /** With each outbound entry's latest delivery receipt. */
  transcript: (TranscriptEntry & { delivery?: { status: string } })[];
  /** Newest first. */
  events: StoredEvent[];
  chatPath: string | undefined;
  /** A telegram participant's new one-time deep link, and whether a chat is bound already. */
  telegram?: { link: string; linked: boolean } | undefined;
}

function zoneNote(participant: Participant, zone: string): string {
  if (participant.timezone) return participant.timezone;
  return `— (times shown in ${zone}${zone === 'UTC' ? '' : ', the zone of their schedule'})`;
}

/** Rating needs `write` (rating-routes.ts); an open dashboard (no staff accounts) may do everything. */
function mayRate(context: PageContext): boolean {
  return context.staff === undefined || context.staff.permissions.has('write');
}

export function participantPage(context: PageContext, data: ParticipantPageData): string {
  const { participant, state } = data;
  const id = participant.id;
  const time: TimeSetting = { zone: participantTimeZone(participant, state.schedules), now: context.clock.now };
  const action = (path: string, label: string, extra: SafeHtml | string = '') =>
    html`<form method="post" action="/dashboard/participants/${id}/${path}" class="inline">${csrfField(context)}${extra}<button type="submit">${label}</button></form>`;
  const lastId = data.transcript.at(-1)?.id ?? 0;
  const profile = state.profile;
  return layout(
    participant.name || participant.id,
    context,
    html`<section class="grid">
<div class="card"><h2>Participant</h2><dl>
<dt>Phone</dt><dd>${participant.phoneNumber}</dd><dt>Channel</dt><dd>${participant.channel || context.channels[0]}</dd><dt>Status</dt><dd id="participant-status">${participant.status}</dd>
<dt>Sub-state</dt><dd id="sub-state">${state.conversationState}</dd><dt>Time zone</dt><dd id="participant-zone">${zoneNote(participant, time.zone)}</dd>
<dt>Language</dt><dd id="participant-language">${participant.language ?? '\u2014'}</dd>
${participant.arm === undefined ? '' : html`<dt>Arm</dt><dd id="participant-arm"><a href="/dashboard/study">${participant.arm}</a> (<a href="/dashboard/participants/${id}/decisions">decisions</a>)</dd>`}
<dt>Success count</dt><dd id="success-count">${profile?.success_count ?? 0}</dd><dt>Prompts sent</dt><dd>${profile?.total_prompts ?? 0}</dd>
${data.telegram ? html`<dt>Telegram link</dt><dd><a id="telegram-link" href="${data.telegram.link}">${data.telegram.link}</a> (${data.telegram.linked ? 'chat linked; a new link moves it' : 'not opened yet'}; one use, 30 days)</dd>` : ''}
${data.chatPath ? html`<dt>Web chat link</dt><dd><a id="chat-link" href="${data.chatPath}">${data.chatPath}</a> ${action('chat-link', 'Revoke and issue a new link')}</dd>` : ''}
</dl></div>
<div class="card" id="profile"><h2>Profile and tone</h2>${profileSection(profile, time)}</div>
<div class="card" id="schedules"><h2>Schedules and timers</h2>${schedulesSection(state.schedules, state.pendingJobs, time)}</div>
</section>
<section class="card"><h2>Actions</h2>
<form method="post" action="/dashboard/participants/${id}/message">${csrfField(context)}<label for="organiser-message">Message to the participant</label>
<textarea id="organiser-message" name="text" required rows="2"></textarea><button type="submit">Send message</button></form>
<div class="actions">${action('transition', 'Move to INTAKE', html`<input type="hidden" name="target" value="INTAKE">`)}${action('transition', 'Move to FEEDBACK', html`<input type="hidden" name="target" value="FEEDBACK">`)}
${action('status', 'Pause', html`<input type="hidden" name="status" value="paused">`)}${action('status', 'Resume', html`<input type="hidden" name="status" value="active">`)}
${action('status', 'Complete', html`<input type="hidden" name="status" value="completed">`)}${action('status', 'Withdraw', html`<input type="hidden" name="status" value="withdrawn">`)}
<a class="button danger" href="/dashboard/participants/${id}/delete">Delete&hellip;</a></div></section>
<section class="card"><h2>Conversation <small>(times in ${time.zone})</small></h2>${mayRate(context) ? html`<p><a id="rate-link" href="/dashboard/participants/${id}/rate">Rate this conversation</a> (rubric scores of the whole conversation or one coach turn)</p>` : ''}<ol id="transcript" class="chat" data-live="/dashboard/participants/${id}/live?after=${lastId}" aria-live="polite">
${data.transcript.map((entry) => dashboardEntry(entry, time.zone))}</ol></section>
<section class="card"><h2>Recent events</h2>${eventsTable(data.events, time)}</section>`,
  );
}
