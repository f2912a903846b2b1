/**
 * The dashboard's pages for rating `promptpipe eval` runs: the runs found in `EVAL_REPORTS_DIR`, one run's
 * conversations with the judge–human agreement so far, and one conversation's transcript with the run's rubric form.
 * The judge's scores are not shown beside the form, so a human rating is given blind to them.
 */

import { evalConversation } from '../research/ratings/eval-conversation.ts';
import type { AgreementRow } from '../research/ratings/human-agreement.ts';
import type { FoundReport, RunReport, RunReportConversation } from '../research/ratings/report-reader.ts';
import type { Rating } from '../store/ratings-records.ts';
import { layout, localTime, type PageContext } from './dashboard-pages.ts';
import { html } from './html.ts';
import { ratingForm, ratingsTable } from './rating-page.ts';

export const runPath = (runId: string): string => `/dashboard/evaluations/${encodeURIComponent(runId)}`;

/** `/dashboard/evaluations/<run>/A/ada.1`. */
export const conversationPath = (runId: string, conversation: RunReportConversation): string =>
  `${runPath(runId)}/${encodeURIComponent(conversation.configuration)}/${encodeURIComponent(`${conversation.persona}.${conversation.repeat}`)}`;

export function evaluationsPage(
  context: PageContext,
  input: { reportsDir: string; reports: readonly FoundReport[]; ratingsPerRun: ReadonlyMap<string, number> },
): string {
  const rows = input.reports.map((report) =>
    'run' in report
      ? html`<tr><td><a href="${runPath(report.run.id)}">${report.run.id}</a></td><td>${report.run.startedAt.slice(0, 16).replace('T', ' ')}</td><td>${report.summary.days}</td><td>${report.summary.configurations.map((configuration) => configuration.label).join(', ')}</td><td>${report.conversations.length}</td><td>${report.summary.passed ? 'passed' : 'failed'}</td><td>${input.ratingsPerRun.get(report.run.id) ?? 0}</td><td>${report.directory}</td></tr>`
      : html`<tr><td colspan="7" class="error">${report.problem}</td><td>${report.directory}</td></tr>`,
  );
  const body = rows.length
    ? html`<table id="evaluation-runs"><tr><th>run</th><th>started (UTC)</th><th>days</th><th>configurations</th><th>conversations</th><th>gate</th><th>human ratings</th><th>directory</th></tr>${rows}</table>`
    : html`<p class="muted">No evaluation runs in ${input.reportsDir} yet. Run <code>promptpipe eval --out ${input.reportsDir}</code> (or into a directory in it), or point <code>EVAL_REPORTS_DIR</code> at your reports.</p>`;
  return layout(
    'Evaluation runs',
    context,
    html`<p>Runs of <code>promptpipe eval</code> found in <code>${input.reportsDir}</code>. Rate their conversations with the run's rubric; the ratings are study data (export table <code>ratings</code>) and the human side of the judge\u2013human agreement.</p>${body}`,
  );
}

export function evaluationRunPage(
  context: PageContext,
  input: { report: RunReport; ratings: readonly Rating[]; agreement: readonly AgreementRow[] },
): string {
  const { report } = input;
  const counted = (conversation: RunReportConversation) => {
    const key = evalConversation(report.run.id, conversation.conversation);
    const mine = input.ratings.filter((rating) => rating.conversation === key);
    const whole = mine.filter((rating) => rating.transcriptEntryId === undefined).length;
    return `${whole} / ${mine.length - whole}`;
  };
  const agreement = input.agreement.length
    ? html`<table id="agreement"><tr><th>criterion</th><th>quadratic-weighted kappa</th><th>exact agreement</th><th>pairs (conversation \u00d7 rater)</th></tr>${input.agreement.map(
        (row) =>
          html`<tr><td>${row.criterion}</td><td>${row.kappa.toFixed(3)}</td><td>${(row.observedAgreement * 100).toFixed(0)}%</td><td>${row.items}</td></tr>`,
      )}</table>`
    : html`<p class="muted" id="agreement">No whole-conversation ratings of this run with a judge score yet.</p>`;
  return layout(
    `Evaluation run ${report.run.id}`,
    context,
    html`<p><a href="/dashboard/evaluations">All runs</a> \u00b7 rubric: ${report.rubric.name} (${report.rubric.scale.min}\u2013${report.rubric.scale.max}) \u00b7 ${report.summary.days} study days \u00b7 directory ${report.directory}</p>
<section><h2>Conversations</h2><table id="run-conversations"><tr><th>conversation</th><th>persona</th><th>configuration</th><th>repeat</th><th>language</th><th>human scores (whole conversation / coach turns)</th></tr>${report.conversations.map(
      (conversation) =>
        html`<tr><td><a href="${conversationPath(report.run.id, conversation)}">${conversation.conversation}</a></td><td>${conversation.persona}</td><td>${conversation.configuration}</td><td>${conversation.repeat}</td><td>${conversation.language}</td><td>${counted(conversation)}</td></tr>`,
    )}</table></section>
<section><h2>Judge\u2013human agreement</h2>${agreement}<p class="muted">From the ratings stored in this study: each rater's latest whole-conversation score against the judge's. <code>promptpipe eval-report --out ${report.directory} --study-ratings</code> writes it into the run's report.</p></section>`,
  );
}

export function evaluationConversationPage(
  context: PageContext,
  input: { report: RunReport; conversation: RunReportConversation; ratings: readonly Rating[]; mayRate: boolean },
): string {
  const { report, conversation } = input;
  const { rubric } = report;
  const numbered = conversation.lines.map((line, index) => ({ line, number: index + 1 }));
  const transcript = html`<ol class="rating-transcript">${numbered.map(
    ({ line, number }) =>
      html`<li id="line-${number}"><span class="muted">${localTime(new Date(line.at), conversation.timezone)} \u00b7 line ${number} \u00b7 ${line.from === 'persona' ? 'participant' : `coach (${line.kind})`}${line.mark ? ` \u00b7 ${line.mark}` : ''}</span><br>${line.text}${line.pollOptions ? html` <span class="muted">[${line.pollOptions.join(' / ')}]</span>` : ''}</li>`,
  )}</ol>`;
  const form = ratingForm(context, {
    action: `${conversationPath(report.run.id, conversation)}/ratings`,
    rubric,
    turns: numbered
      .filter(({ line }) => line.from === 'coach')
      .map(({ line, number }) => ({ value: number, label: `coach line ${number}: ${line.text}` })),
    mayRate: input.mayRate,
  });
  return layout(
    `Rate ${conversation.conversation}`,
    context,
    html`<p><a href="${runPath(report.run.id)}">Back to run ${report.run.id}</a> \u00b7 persona ${conversation.persona} \u00b7 configuration ${conversation.configuration} \u00b7 rubric: ${rubric.name} (${rubric.scale.min}\u2013${rubric.scale.max})</p>
<section><h2>Rate</h2>${form}</section><section><h2>Ratings</h2>${ratingsTable(input.ratings, (turn) => `line ${turn}`)}</section><section><h2>Conversation</h2>${transcript}</section>`,
  );
}
