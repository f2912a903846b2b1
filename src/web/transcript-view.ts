/**
 * One transcript entry as a chat bubble. The dashboard sees everything (tool calls and results folded in <details>);
 * the participant's web chat sees only what was said to them or by them, with polls as buttons.
 */
import { parseRecordedPoll } from '../channels/inbound-service.ts';
import type { TranscriptEntry } from '../store/store.ts';
import { html, type SafeHtml } from './html.ts';

/** What a participant saw or wrote. */
const PARTICIPANT_VISIBLE = new Set(['message', 'reply', 'proactive', 'poll', 'organiser', 'notice']);

function time(entry: TranscriptEntry): SafeHtml {
  return html`<time datetime="${entry.createdAt.toISOString()}">${entry.createdAt.toISOString().slice(0, 16).replace('T', ' ')} UTC</time>`;
}

function side(entry: TranscriptEntry): 'in' | 'out' {
  return entry.role === 'user' ? 'in' : 'out';
}

function pollOf(entry: TranscriptEntry) {
  return entry.kind === 'poll' && entry.outboundId ? parseRecordedPoll(entry.outboundId, entry.content) : undefined;
}

/** The latest delivery receipt of an outbound entry (`sent`, `delivered`, `failed`…); none yet: `queued`. */
export function dashboardEntry(entry: TranscriptEntry & { delivery?: { status: string } }): SafeHtml {
  const where = side(entry);
  if (entry.kind === 'tool_call' || entry.kind === 'tool_result' || entry.kind === 'debug') {
    const calls = (entry.toolCalls ?? []).map((call) => html`<pre>${call.name}(${call.arguments})</pre>`);
    const label =
      entry.kind === 'tool_call'
        ? `tool call: ${(entry.toolCalls ?? []).map((call) => call.name).join(', ') || 'assistant'}`
        : entry.kind === 'tool_result'
          ? `tool result: ${entry.toolName ?? ''}`
          : 'debug';
    return html`<li class="entry meta" data-entry-id="${entry.id}"><details><summary>${label} &middot; ${time(entry)}</summary>${calls}<pre>${entry.content}</pre></details></li>`;
  }
  const poll = pollOf(entry);
  const delivery = entry.outboundId
    ? html`<span class="delivery delivery-${entry.delivery?.status ?? 'queued'}">${entry.delivery?.status ?? 'queued'}</span>`
    : '';
  const body = poll
    ? html`<p>${poll.question}</p><ul class="poll-options">${poll.options.map((option) => html`<li>${option}</li>`)}</ul>`
    : html`<p>${entry.content}</p>`;
  return html`<li class="entry ${where} kind-${entry.kind}" data-entry-id="${entry.id}"><div class="bubble">${body}<footer>${entry.kind}${entry.module ? ` · ${entry.module}` : ''} &middot; ${time(entry)} ${delivery}</footer></div></li>`;
}

export function chatEntry(entry: TranscriptEntry): SafeHtml | undefined {
  if (!PARTICIPANT_VISIBLE.has(entry.kind)) return undefined;
  const poll = pollOf(entry);
  const mine = entry.role === 'user';
  const body = poll
    ? html`<p>${poll.question}</p><div class="poll" role="group" aria-label="${poll.question}">${poll.options.map(
        (option) =>
          html`<button type="button" class="poll-option" data-poll-id="${poll.id}" data-option="${option}">${option}</button>`,
      )}</div>`
    : html`<p>${entry.content}</p>`;
  return html`<li class="entry ${mine ? 'in' : 'out'}" data-entry-id="${entry.id}"><div class="bubble">${body}<footer>${time(entry)}</footer></div></li>`;
}
