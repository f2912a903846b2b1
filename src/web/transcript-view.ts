/**
 * One transcript entry as a chat bubble. The dashboard sees everything (tool calls and results folded in <details>);
 * the participant's web chat sees only what was said to them or by them, with polls as buttons.
 */
import { parseRecordedPoll } from '../inbound/recorded-polls.ts';
import type { TranscriptEntry } from '../store/ports/conversation-store.ts';
import { html, type SafeHtml } from './html.ts';
import { zonedTime } from './zoned-time.ts';

/** What a participant saw or wrote. */
const PARTICIPANT_VISIBLE = new Set(['message', 'reply', 'proactive', 'poll', 'organiser', 'notice']);

/** The exact instant in `datetime` (the chat page's script re-renders it in the browser's zone when asked to). */
function time(entry: TranscriptEntry, timeZone: string): SafeHtml {
  return html`<time datetime="${entry.createdAt.toISOString()}">${zonedTime(entry.createdAt, timeZone)}</time>`;
}

function side(entry: TranscriptEntry): 'in' | 'out' {
  return entry.role === 'user' ? 'in' : 'out';
}

function pollOf(entry: TranscriptEntry) {
  return entry.kind === 'poll' && entry.outboundId ? parseRecordedPoll(entry.outboundId, entry.content) : undefined;
}

/**
 * The latest delivery receipt of an outbound entry (`sent`, `delivered`, `failed`…); none yet: `queued`. Times in
 * `timeZone` (the participant's; the page names it once).
 */
export function dashboardEntry(entry: TranscriptEntry & { delivery?: { status: string } }, timeZone: string): SafeHtml {
  const where = side(entry);
  if (entry.kind === 'tool_call' || entry.kind === 'tool_result' || entry.kind === 'debug') {
    const calls = (entry.toolCalls ?? []).map((call) => html`<pre>${call.name}(${call.arguments})</pre>`);
    const label =
      entry.kind === 'tool_call'
        ? `tool call: ${(entry.toolCalls ?? []).map((call) => call.name).join(', ') || 'assistant'}`
        : entry.kind === 'tool_result'
          ? `tool result: ${entry.toolName ?? ''}`
          : 'debug';
    return html`<li class="entry meta" data-entry-id="${entry.id}"><details><summary>${label} &middot; ${time(entry, timeZone)}</summary>${calls}<pre>${entry.content}</pre></details></li>`;
  }
  const poll = pollOf(entry);
  const delivery = entry.outboundId
    ? html`<span class="delivery delivery-${entry.delivery?.status ?? 'queued'}">${entry.delivery?.status ?? 'queued'}</span>`
    : '';
  const body = poll
    ? html`<p>${poll.question}</p><ul class="poll-options">${poll.options.map((option) => html`<li>${option}</li>`)}</ul>`
    : html`<p>${entry.content}</p>`;
  return html`<li class="entry ${where} kind-${entry.kind}" data-entry-id="${entry.id}"><div class="bubble">${body}<footer>${entry.kind}${entry.module ? ` \u00b7 ${entry.module}` : ''} &middot; ${time(entry, timeZone)} ${delivery}</footer></div></li>`;
}

/** Times in `timeZone`: the participant's own, else UTC until the page's script shows the browser's. */
export function chatEntry(entry: TranscriptEntry, timeZone: string): SafeHtml | undefined {
  if (!PARTICIPANT_VISIBLE.has(entry.kind)) return undefined;
  const poll = pollOf(entry);
  const mine = entry.role === 'user';
  const body = poll
    ? html`<p>${poll.question}</p><div class="poll" role="group" aria-label="${poll.question}">${poll.options.map(
        (option) =>
          html`<button type="button" class="poll-option" data-poll-id="${poll.id}" data-option="${option}">${option}</button>`,
      )}</div>`
    : html`<p>${entry.content}</p>`;
  return html`<li class="entry ${mine ? 'in' : 'out'}" data-entry-id="${entry.id}"><div class="bubble">${body}<footer>${time(entry, timeZone)}</footer></div></li>`;
}
