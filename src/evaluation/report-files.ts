/**
 * Writes report.json (the run, its rubric, the summary and each conversation's rules, scores and transcript: for
 * scripts and for the dashboard's rating of the run, report-reader.ts) and report.html.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunIdentity } from '../research/ratings/eval-conversation.ts';
import type { Rubric } from '../research/ratings/rubric.ts';
import { type ConversationResult, conversationKey } from './evaluation-run.ts';
import { renderReportHtml } from './report-html.ts';
import type { EvaluationSummary } from './report-summary.ts';

export function writeReport(
  outDir: string,
  report: { run: RunIdentity; summary: EvaluationSummary; results: readonly ConversationResult[]; rubric: Rubric },
): void {
  const { run, summary, results, rubric } = report;
  mkdirSync(outDir, { recursive: true });
  const conversations = results.map((result) => ({
    conversation: conversationKey(result.configuration, result.persona, result.repeat),
    persona: result.persona,
    configuration: result.configuration,
    repeat: result.repeat,
    rules: result.rules,
    scores: result.judgement?.scores ?? {},
    ...(result.judgement?.error ? { judgeError: result.judgement.error } : {}),
    timezone: result.record.timezone,
    language: result.record.language,
    lines: result.record.lines,
  }));
  const json = join(outDir, 'report.json');
  writeFileSync(`${json}.partial`, `${JSON.stringify({ run, rubric, summary, conversations }, null, 2)}\n`);
  renameSync(`${json}.partial`, json);
  writeFileSync(join(outDir, 'report.html'), renderReportHtml(summary, results, rubric, run));
}
