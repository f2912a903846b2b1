/** Writes report.json (the summary and each conversation's rules and scores, for scripts) and report.html. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ConversationResult, conversationKey } from './evaluation-run.ts';
import { renderReportHtml } from './report-html.ts';
import type { EvaluationSummary } from './report-summary.ts';
import type { Rubric } from './rubric.ts';

export function writeReport(
  outDir: string,
  summary: EvaluationSummary,
  results: readonly ConversationResult[],
  rubric: Rubric,
): void {
  mkdirSync(outDir, { recursive: true });
  const conversations = results.map((result) => ({
    conversation: conversationKey(result.configuration, result.persona, result.repeat),
    persona: result.persona,
    configuration: result.configuration,
    repeat: result.repeat,
    rules: result.rules,
    scores: result.judgement?.scores ?? {},
    ...(result.judgement?.error ? { judgeError: result.judgement.error } : {}),
  }));
  writeFileSync(join(outDir, 'report.json'), `${JSON.stringify({ summary, conversations }, null, 2)}\n`);
  writeFileSync(join(outDir, 'report.html'), renderReportHtml(summary, results, rubric));
}
