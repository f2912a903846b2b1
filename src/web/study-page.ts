/**
 * `/dashboard/study`: the trial's allocation report — the design in force, counts per arm (in force and as drawn),
 * per stratum, each stratum's block progress, and the overrides. For admins: a block's progress hints at what its
 * remaining allocations are (concealment), so the page needs the same permission as `GET /study/allocations`.
 */
import type { Decision } from '../store/decisions.ts';
import type { RandomisationPause } from '../trials/randomisation-pause.ts';
import type { AllocationReport } from '../trials/trial-service.ts';
import { csrfField, layout, type PageContext } from './dashboard-pages.ts';
import { html } from './html.ts';

export function studyPage(
  context: PageContext,
  study: { id: string; hash: string; method: string } | undefined,
  report: AllocationReport | undefined,
  randomisation?: RandomisationPause,
): string {
  if (!study || !report) {
    return layout(
      'Study',
      context,
      html`<p>No study design is loaded (<code>STUDY_DESIGN_FILE</code>): every participant gets the same conversation.</p>`,
    );
  }
  const armIds = report.arms.map((arm) => arm.armId);
  return layout(
    `Study ${study.id}`,
    context,
    html`<section class="card"><h2>Design</h2><dl><dt>Allocation</dt><dd>${study.method}</dd>
<dt>Design hash</dt><dd><code id="design-hash">${study.hash}</code></dd><dt>Allocated</dt><dd id="allocated-total">${report.total}</dd>
<dt>Staff overrides</dt><dd>${report.overrides}</dd></dl></section>
<section class="card"><h2>Arms</h2><table id="arm-counts"><thead><tr><th scope="col">Arm</th><th scope="col">Label</th><th scope="col">In force</th><th scope="col">Drawn</th></tr></thead><tbody>
${report.arms.map((arm) => html`<tr><th scope="row">${arm.armId}</th><td>${arm.label}</td><td>${arm.inForce}</td><td>${arm.drawn}</td></tr>`)}
</tbody></table></section>
<section class="card"><h2>Strata and blocks</h2><table id="strata"><thead><tr><th scope="col">Stratum</th>${armIds.map((id) => html`<th scope="col">${id}</th>`)}<th scope="col">Block</th><th scope="col">Taken</th></tr></thead><tbody>
${report.strata.map(
  (stratum) =>
    html`<tr><th scope="row">${stratum.stratum || '(all)'}</th>${armIds.map((id) => html`<td>${stratum.counts[id] ?? 0}</td>`)}<td>${stratum.block && stratum.block.blockIndex >= 0 ? String(stratum.block.blockIndex + 1) : '\u2014'}</td><td>${stratum.block && stratum.block.blockSize > 0 ? `${stratum.block.position} of ${stratum.block.blockSize}` : '\u2014'}</td></tr>`,
)}
</tbody></table></section>
${randomisationCard(context, randomisation)}`,
  );
}

/** Whether decision points draw, the last change (who, when, why), and the form that changes it. */
function randomisationCard(context: PageContext, state: RandomisationPause | undefined) {
  const paused = state?.paused === true;
  const change = paused ? 'resume' : 'pause';
  const last = state?.changedAt
    ? html`<p id="randomisation-change">${paused ? 'Paused' : 'Resumed'} ${state.changedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC by ${state.by ?? ''}: ${state.reason ?? ''}</p>`
    : '';
  return html`<section class="card"><h2>Randomisation at decision points</h2>
<p id="randomisation-state">${paused ? 'Paused: each decision point is recorded as unavailable (randomisation_paused); nothing is drawn or sent.' : 'Running.'} Allocation at enrollment is not affected.</p>${last}
<form method="post" action="/dashboard/study/randomisation/${change}">${csrfField(context)}
<label>Reason <input name="reason" required maxlength="1000"></label> <button type="submit">${paused ? 'Resume randomisation' : 'Pause randomisation'}</button></form></section>`;
}

/** `/dashboard/participants/<id>/decisions`: every decision point moment of one participant, oldest first. */
export function decisionsPage(context: PageContext, participantId: string, decisions: readonly Decision[]): string {
  const outcomeText = (decision: Decision) => (decision.outcome ? JSON.stringify(decision.outcome) : '—');
  return layout(
    `Decisions of ${participantId}`,
    context,
    html`<p><a href="/dashboard/participants/${participantId}">Back to the participant</a></p>
${
  decisions.length === 0
    ? html`<p>No decision point has been decided for this participant yet.</p>`
    : html`<table id="decisions"><thead><tr><th scope="col">Moment (local)</th><th scope="col">Decision point</th><th scope="col">Arm</th><th scope="col">Available</th><th scope="col">Probabilities</th><th scope="col">Option</th><th scope="col">Draw</th><th scope="col">Sent</th><th scope="col">Outcome</th></tr></thead><tbody>
${decisions.map(
  (decision) =>
    html`<tr><td>${decision.intendedLocal}</td><td>${decision.decisionPointId}</td><td>${decision.armId || '\u2014'}</td><td>${decision.available ? 'yes' : `no: ${decision.unavailableReason ?? ''}`}</td><td>${Object.entries(
      decision.probabilities,
    )
      .map(([option, probability]) => `${option} ${probability}`)
      .join(
        ', ',
      )}</td><td>${decision.option ?? '\u2014'}</td><td>${decision.draw === null ? '\u2014' : decision.draw.toFixed(4)}</td><td>${decision.sentAt ? decision.sentAt.toISOString().slice(0, 16).replace('T', ' ') : '\u2014'}</td><td>${outcomeText(decision)}</td></tr>`,
)}
</tbody></table>`
}`,
  );
}
