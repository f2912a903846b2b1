/**
 * The page on which staff rate a participant's conversation with the rubric the evaluation's judge uses: the
 * transcript, one row of scores per criterion for the whole conversation or one coach turn, and the ratings so far.
 */
import type { Participant } from '../domain/participant.ts';
import type { Rubric } from '../evaluation/rubric.ts';
import type { Rating } from '../store/ratings-records.ts';
import type { TranscriptEntry } from '../store/store.ts';
import { csrfField, layout, localTime, type PageContext } from './dashboard-pages.ts';
import { html } from './html.ts';

/** The entries a rater reads: what the participant wrote and what the coach sent them (no tool calls or debug). */
const SHOWN_KINDS = new Set(['message', 'reply', 'proactive', 'poll', 'organiser', 'notice']);

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
  const scores = Array.from(
    { length: rubric.scale.max - rubric.scale.min + 1 },
    (_, index) => rubric.scale.min + index,
  );
  const transcript = html`<ol class="rating-transcript">${shown.map(
    (entry) =>
      html`<li id="entry-${entry.id}"><span class="muted">${localTime(entry.createdAt, zone)} \u00b7 #${entry.id} \u00b7 ${entry.role === 'user' ? 'participant' : `coach (${entry.kind})`}</span><br>${entry.content}</li>`,
  )}</ol>`;
  const form = input.mayRate
    ? html`<form method="post" action="/dashboard/participants/${participant.id}/ratings" class="rating-form">${csrfField(context)}
<label>What you rate <select name="turn"><option value="">the whole conversation</option>${coachTurns.map((entry) => html`<option value="${entry.id}">coach turn #${entry.id}: ${entry.content.slice(0, 60)}</option>`)}</select></label>
<table><tr><th>criterion</th>${scores.map((score) => html`<th>${score}</th>`)}<th>not rated</th></tr>${rubric.criteria.map(
        (criterion) =>
          html`<tr><td><strong>${criterion.name}</strong><br><span class="muted">${criterion.description}</span></td>${scores.map(
            (score) =>
              html`<td><input type="radio" name="score_${criterion.id}" value="${score}" aria-label="${criterion.name} ${score}"${html`${criterion.anchors[String(score)] ? html` title="${criterion.anchors[String(score)]}"` : ''}`}></td>`,
          )}<td><input type="radio" name="score_${criterion.id}" value="" checked aria-label="${criterion.name} not rated"></td></tr>`,
      )}</table>
<label>Comment <textarea name="comment" rows="2"></textarea></label>
<button type="submit">Save ratings</button></form>`
    : html`<p class="muted">Rating needs the write permission.</p>`;
  const ratings = input.ratings.length
    ? html`<table class="ratings"><tr><th>when</th><th>rater</th><th>turn</th><th>criterion</th><th>score</th><th>comment</th></tr>${input.ratings.map(
        (rating) =>
          html`<tr><td>${rating.createdAt.toISOString().slice(0, 16).replace('T', ' ')}</td><td>${rating.rater}</td><td>${rating.transcriptEntryId === undefined ? 'whole' : `#${rating.transcriptEntryId}`}</td><td>${rating.criterion}</td><td>${rating.score}</td><td>${rating.comment ?? ''}</td></tr>`,
      )}</table>`
    : html`<p class="muted">No ratings yet.</p>`;
  return layout(
    `Rate ${participant.name || participant.id}`,
    context,
    html`<p><a href="/dashboard/participants/${participant.id}">Back to the participant</a> \u00b7 rubric: ${rubric.name} (${rubric.scale.min}\u2013${rubric.scale.max})</p>
${context.flash ? html`<p class="flash" role="status">${context.flash}</p>` : ''}
<section><h2>Rate</h2>${form}</section><section><h2>Ratings</h2>${ratings}</section><section><h2>Conversation</h2>${transcript}</section>`,
  );
}
