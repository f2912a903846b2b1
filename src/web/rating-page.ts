/**
 * The page on which staff rate a participant's conversation with the rubric the evaluation's judge uses: the
 * transcript, one row of scores per criterion for the whole conversation or one coach turn, and the ratings so far.
 * The form and the ratings table are shared with the rating of an evaluation run's conversation (eval-rating-page.ts).
 */
import type { Participant } from '../domain/participant.ts';
import type { Rubric } from '../research/ratings/rubric.ts';
import type { TranscriptEntry } from '../store/ports/conversation-store.ts';
import type { Rating } from '../store/ratings-records.ts';
import { csrfField, layout, localTime, type PageContext } from './dashboard-pages.ts';
import { html, type SafeHtml } from './html.ts';

/** The entries a rater reads: what the participant wrote and what the coach sent them (no tool calls or debug). */
const SHOWN_KINDS = new Set(['message', 'reply', 'proactive', 'poll', 'organiser', 'notice']);

/** The rubric form: what is rated (the whole conversation or one of `turns`), a score per criterion, a comment. */
export function ratingForm(
  context: PageContext,
  input: { action: string; rubric: Rubric; turns: readonly { value: number; label: string }[]; mayRate: boolean },
): SafeHtml {
  const { rubric } = input;
  if (!input.mayRate) return html`<p class="muted">Rating needs the write permission.</p>`;
  const scores = Array.from(
    { length: rubric.scale.max - rubric.scale.min + 1 },
    (_, index) => rubric.scale.min + index,
  );
  return html`<form method="post" action="${input.action}" class="rating-form">${csrfField(context)}
<label>What you rate <select name="turn"><option value="">the whole conversation</option>${input.turns.map((turn) => html`<option value="${turn.value}">${turn.label.slice(0, 80)}</option>`)}</select></label>
<table><tr><th>criterion</th>${scores.map((score) => html`<th>${score}</th>`)}<th>not rated</th></tr>${rubric.criteria.map(
    (criterion) =>
      html`<tr><td><strong>${criterion.name}</strong><br><span class="muted">${criterion.description}</span></td>${scores.map(
        (score) =>
          html`<td><input type="radio" name="score_${criterion.id}" value="${score}" aria-label="${criterion.name} ${score}"${html`${criterion.anchors[String(score)] ? html` title="${criterion.anchors[String(score)]}"` : ''}`}></td>`,
      )}<td><input type="radio" name="score_${criterion.id}" value="" checked aria-label="${criterion.name} not rated"></td></tr>`,
  )}</table>
<label>Comment <textarea name="comment" rows="2"></textarea></label>
<button type="submit">Save ratings</button></form>`;
}

/** The ratings so far, oldest first; `turnLabel` names a rated coach turn. */
export function ratingsTable(ratings: readonly Rating[], turnLabel: (turn: number) => string): SafeHtml {
  if (ratings.length === 0) return html`<p class="muted">No ratings yet.</p>`;
  return html`<table class="ratings"><tr><th>when</th><th>rater</th><th>turn</th><th>criterion</th><th>score</th><th>comment</th></tr>${ratings.map(
    (rating) =>
      html`<tr><td>${rating.createdAt.toISOString().slice(0, 16).replace('T', ' ')}</td><td>${rating.rater}</td><td>${rating.transcriptEntryId === undefined ? 'whole' : turnLabel(rating.transcriptEntryId)}</td><td>${rating.criterion}</td><td>${rating.score}</td><td>${rating.comment ?? ''}</td></tr>`,
  )}</table>`;
}

export function ratingPage(
  context: PageContext,
  input: {
    participant: Participant;
    transcript: readonly TranscriptEntry[];
    rubric: Rubric;
    ratings: readonly Rating[];
    mayRate: boolean;
  },
): string {
  const { participant, rubric } = input;
  const zone = participant.timezone || 'UTC';
  const shown = input.transcript.filter((entry) => entry.role === 'user' || SHOWN_KINDS.has(entry.kind));
  const coachTurns = shown.filter((entry) => entry.role === 'assistant');
  const transcript = html`<ol class="rating-transcript">${shown.map(
    (entry) =>
      html`<li id="entry-${entry.id}"><span class="muted">${localTime(entry.createdAt, zone)} \u00b7 #${entry.id} \u00b7 ${entry.role === 'user' ? 'participant' : `coach (${entry.kind})`}</span><br>${entry.content}</li>`,
  )}</ol>`;
  const form = ratingForm(context, {
    action: `/dashboard/participants/${participant.id}/ratings`,
    rubric,
    turns: coachTurns.map((entry) => ({ value: entry.id, label: `coach turn #${entry.id}: ${entry.content}` })),
    mayRate: input.mayRate,
  });
  return layout(
    `Rate ${participant.name || participant.id}`,
    context,
    html`<p><a href="/dashboard/participants/${participant.id}">Back to the participant</a> \u00b7 rubric: ${rubric.name} (${rubric.scale.min}\u2013${rubric.scale.max})</p>
<section><h2>Rate</h2>${form}</section><section><h2>Ratings</h2>${ratingsTable(input.ratings, (turn) => `#${turn}`)}</section><section><h2>Conversation</h2>${transcript}</section>`,
  );
}
