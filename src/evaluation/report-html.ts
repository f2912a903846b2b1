/**
 * The evaluation report as ONE self-contained HTML page (no script, no external asset: it opens from a CI artefact):
 * the gate's outcome, the rules, a chart of the mean score per criterion and configuration, the comparison, the
 * judge–human agreement, and every conversation with its configurations side by side, failed rules and scores.
 */

import type { ConversationLine } from '../research/ratings/conversation-line.ts';
import type { RunIdentity } from '../research/ratings/eval-conversation.ts';
import type { Rubric } from '../research/ratings/rubric.ts';
import { html, type SafeHtml } from '../web/html.ts';
import type { ConversationResult } from './evaluation-run.ts';
import type { EvaluationSummary } from './report-summary.ts';

const COLOURS = ['#2f6fb0', '#d9822b', '#3a9a5b', '#8e44ad'];

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d232b;background:#fafbfc}
h1{margin:0 0 8px}h2{margin-top:32px;border-bottom:1px solid #d8dde3;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #d8dde3;padding:4px 8px;text-align:left;vertical-align:top}
.badge{display:inline-block;padding:2px 10px;border-radius:10px;color:#fff;font-weight:600}
.pass{background:#2e8540}.fail{background:#c0392b}.na{background:#8a939d}
.cell-fail{background:#fdecea}.cell-pass{background:#eef7f0}
.pair{display:grid;grid-template-columns:repeat(var(--columns),minmax(0,1fr));gap:16px}
.side{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:8px 12px}
.line{margin:4px 0;padding:4px 8px;border-radius:6px;white-space:pre-wrap}
.coach{background:#eef3f9}.persona{background:#f4f0e8;margin-left:48px}
.time{color:#66707a;font-size:12px;margin-right:6px}.tag{color:#66707a;font-size:12px}
pre{white-space:pre-wrap;background:#f3f4f6;padding:8px;max-height:320px;overflow:auto}`;

function format(value: number | null | undefined, digits = 2): string {
  return value === null || value === undefined ? '–' : value.toFixed(digits);
}

function statusBadge(status: string): SafeHtml {
  const kind = status === 'pass' ? 'pass' : status === 'fail' ? 'fail' : 'na';
  return html`<span class="badge ${kind}">${status}</span>`;
}

function scoreChart(summary: EvaluationSummary, rubric: Rubric): SafeHtml {
  const labels = summary.configurations.map((configuration) => configuration.label);
  const rowHeight = 14 * labels.length + 16;
  const width = 520;
  const left = 200;
  const span = rubric.scale.max - rubric.scale.min;
  const height = rowHeight * summary.scores.length + 30;
  const bars = summary.scores.map((score, row) => {
    const top = row * rowHeight + 8;
    const bar = labels.map((label, index) => {
      const value = score.means[label];
      const length =
        value === null || value === undefined ? 0 : ((value - rubric.scale.min) / span) * (width - left - 40);
      const y = top + index * 14;
      return html`<rect x="${left}" y="${y}" width="${Math.max(length, 1).toFixed(1)}" height="12" fill="${COLOURS[index % COLOURS.length] ?? '#333'}"><title>${label}: ${format(value)}</title></rect><text x="${(left + Math.max(length, 1) + 4).toFixed(1)}" y="${y + 10}" font-size="11">${label} ${format(value)}</text>`;
    });
    return html`<text x="0" y="${top + 12}" font-size="12">${score.name}</text>${bar}`;
  });
  return html`<svg role="img" aria-label="mean score per criterion" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"><line x1="${left}" y1="0" x2="${left}" y2="${height - 20}" stroke="#999"/>${bars}<text x="${left}" y="${height - 4}" font-size="11">${rubric.scale.min}</text><text x="${width - 50}" y="${height - 4}" font-size="11">${rubric.scale.max}</text></svg>`;
}

function rulesTable(summary: EvaluationSummary): SafeHtml {
  const labels = summary.configurations.map((configuration) => configuration.label);
  return html`<table><tr><th>rule</th><th>what it checks</th>${labels.map((label) => html`<th>${label}: pass / fail / n.a.</th>`)}</tr>${summary.rules.map(
    (rule) =>
      html`<tr><td>${rule.rule}</td><td>${rule.description}</td>${labels.map((label) => {
        const counts = rule.counts[label] ?? { pass: 0, fail: 0, notApplicable: 0 };
        return html`<td class="${counts.fail > 0 ? 'cell-fail' : 'cell-pass'}">${counts.pass} / ${counts.fail} / ${counts.notApplicable}</td>`;
      })}</tr>`,
  )}</table>`;
}

function comparisonTable(summary: EvaluationSummary): SafeHtml {
  const comparison = summary.comparison;
  if (!comparison) return html``;
  return html`<h2>Comparison: ${comparison.candidate} \u2212 ${comparison.baseline}</h2><table><tr><th>criterion</th><th>persona</th><th>${comparison.baseline}</th><th>${comparison.candidate}</th><th>difference</th><th>spread (sd)</th><th>pairs</th></tr>${comparison.rows.map(
    (row) =>
      html`<tr><td>${row.criterion}</td><td>${row.persona}</td><td>${format(row.baselineMean)}</td><td>${format(row.candidateMean)}</td><td>${row.difference > 0 ? '+' : ''}${format(row.difference)}</td><td>${format(row.spread)}</td><td>${row.pairs}</td></tr>`,
  )}</table>`;
}

function agreementTable(summary: EvaluationSummary): SafeHtml {
  if (summary.agreement.length === 0)
    return html`<h2>Judge\u2013human agreement</h2><p>No human ratings of these conversations yet: staff rate them on the dashboard (Evaluations), then <code>promptpipe eval-report</code> re-renders this page with the agreement.</p>`;
  return html`<h2>Judge\u2013human agreement</h2><table><tr><th>criterion</th><th>quadratic-weighted kappa</th><th>exact agreement</th><th>pairs (conversation \u00d7 rater)</th></tr>${summary.agreement.map(
    (row) =>
      html`<tr><td>${row.criterion}</td><td>${format(row.kappa, 3)}</td><td>${format(row.observedAgreement * 100, 0)}%</td><td>${row.items}</td></tr>`,
  )}</table>`;
}

function transcript(lines: readonly ConversationLine[], timeZone: string): SafeHtml {
  const time = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
  return html`${lines.map(
    (line) =>
      html`<div class="line ${line.from}"><span class="time">${time.format(new Date(line.at))}</span><span class="tag">${line.from} \u00b7 ${line.kind}${line.mark ? ` \u00b7 ${line.mark}` : ''}</span><br>${line.text}${line.pollOptions ? html` <span class="tag">[${line.pollOptions.join(' / ')}]</span>` : ''}</div>`,
  )}`;
}

function conversationSide(result: ConversationResult | undefined, label: string): SafeHtml {
  if (!result) return html`<div class="side"><h4>${label}</h4><p>not run</p></div>`;
  const failed = result.rules.filter((rule) => rule.status === 'fail');
  const judgement = result.judgement;
  return html`<div class="side"><h4>${label}</h4>
<table>${result.rules.map((rule) => html`<tr class="${rule.status === 'fail' ? 'cell-fail' : ''}"><td>${rule.rule}</td><td>${statusBadge(rule.status)}</td><td>${rule.detail}</td></tr>`)}</table>
${failed.length > 0 ? html`<p><strong>Failed rules:</strong> ${failed.map((rule) => rule.rule).join(', ')}</p>` : ''}
${judgement ? html`<table><tr><th>criterion</th><th>score</th><th>judge's reason</th></tr>${Object.entries(judgement.scores).map(([criterion, score]) => html`<tr><td>${criterion}</td><td>${score.score}</td><td>${score.reason}</td></tr>`)}</table>${judgement.error ? html`<p class="cell-fail">judge error: ${judgement.error}</p>` : ''}<details><summary>judge prompt and answer</summary><pre>${judgement.prompt.system}</pre><pre>${judgement.prompt.user}</pre><pre>${judgement.answer}</pre></details>` : ''}
${transcript(result.record.lines, result.record.timezone)}</div>`;
}

export function renderReportHtml(
  summary: EvaluationSummary,
  results: readonly ConversationResult[],
  rubric: Rubric,
  run: RunIdentity,
): string {
  const labels = summary.configurations.map((configuration) => configuration.label);
  const conversations = [...new Set(results.map((result) => `${result.persona}.${result.repeat}`))].sort();
  const page = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>PromptPipe evaluation</title><style>${STYLE}</style></head><body>
<h1>PromptPipe evaluation ${statusBadge(summary.passed ? 'pass' : 'fail')}</h1>
<p>Run <code id="run-id">${run.id}</code> (started ${run.startedAt.slice(0, 16).replace('T', ' ')} UTC) \u00b7 ${summary.days} study days \u00b7 ${summary.repeats} run(s) per persona \u00b7 configurations: ${summary.configurations.map((configuration) => `${configuration.label} (prompts ${configuration.promptsDir ?? 'built-in'}${configuration.model ? `, model ${configuration.model}` : ''}${configuration.toolProtocol ? `, tools ${configuration.toolProtocol}` : ''})`).join('; ')}</p>
${summary.failures.length > 0 ? html`<h2>Failed rules</h2><ul>${summary.failures.map((failure) => html`<li><strong>${failure.rule}</strong> in ${failure.conversation}: ${failure.detail}</li>`)}</ul>` : ''}
${summary.belowThreshold.length > 0 ? html`<h2>Scores below threshold</h2><ul>${summary.belowThreshold.map((entry) => html`<li>${entry.criterion} (${entry.configuration}): ${format(entry.mean)} &lt; ${entry.threshold}</li>`)}</ul>` : ''}
<h2>Rules</h2>${rulesTable(summary)}
<h2>Scores per criterion (${rubric.name}, ${rubric.scale.min}\u2013${rubric.scale.max})</h2>${scoreChart(summary, rubric)}
${comparisonTable(summary)}
${agreementTable(summary)}
<h2>Conversations</h2>
${conversations.map((name) => {
  const [persona, repeat] = [name.slice(0, name.lastIndexOf('.')), Number(name.slice(name.lastIndexOf('.') + 1))];
  const sides = labels.map((label) =>
    conversationSide(
      results.find(
        (result) => result.persona === persona && result.repeat === repeat && result.configuration === label,
      ),
      label,
    ),
  );
  return html`<section id="${name}"><h3>${persona} \u00b7 run ${repeat}</h3><div class="pair" style="--columns:${labels.length}">${sides}</div></section>`;
})}
</body></html>`;
  return page.value;
}
