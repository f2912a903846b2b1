/**
 * The numbers of an evaluation: rule outcomes per configuration, mean judge scores per criterion (and per persona),
 * the comparison of two configurations on the same personas and seeds (difference and its spread over the repeated
 * runs), judge–human agreement where humans rated the same conversations, and whether the run passes its gate.
 */

import { type AgreementRow, type HumanRating, judgeHumanAgreement } from '../research/ratings/human-agreement.ts';
import type { Rubric } from '../research/ratings/rubric.ts';
import { type ConversationResult, conversationKey } from './evaluation-run.ts';
import { RULE_DESCRIPTIONS } from './rules.ts';
import type { CoachConfiguration } from './simulation-app.ts';

export interface ComparisonRow {
  criterion: string;
  /** A persona id, or `all`. */
  persona: string;
  baselineMean: number;
  candidateMean: number;
  difference: number;
  /** Standard deviation of the paired differences (same persona and repeat); null with fewer than two pairs. */
  spread: number | null;
  pairs: number;
}

export interface EvaluationSummary {
  days: number;
  repeats: number;
  configurations: CoachConfiguration[];
  rules: {
    rule: string;
    description: string;
    counts: Record<string, { pass: number; fail: number; notApplicable: number }>;
  }[];
  failures: { conversation: string; rule: string; detail: string }[];
  scores: { criterion: string; name: string; threshold: number | null; means: Record<string, number | null> }[];
  comparison: { baseline: string; candidate: string; rows: ComparisonRow[] } | null;
  /** Per criterion: the judge against each counted human score of the same conversation (human-agreement.ts). */
  agreement: AgreementRow[];
  /** `--min-score`, when it overrode the rubric's thresholds (kept so a re-rendered report gates the same way). */
  minScore: number | null;
  judgeErrors: { conversation: string; error: string }[];
  belowThreshold: { criterion: string; configuration: string; mean: number; threshold: number }[];
  passed: boolean;
}

const mean = (values: readonly number[]): number | null =>
  values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;

function standardDeviation(values: readonly number[]): number | null {
  const average = mean(values);
  if (average === null || values.length < 2) return null;
  return Math.sqrt(values.reduce((sum, value) => sum + (value - average) ** 2, 0) / (values.length - 1));
}

const keyOf = (result: ConversationResult) => conversationKey(result.configuration, result.persona, result.repeat);

function scoreOf(result: ConversationResult, criterion: string): number | undefined {
  return result.judgement?.scores[criterion]?.score;
}

function compare(results: ConversationResult[], rubric: Rubric, baseline: string, candidate: string): ComparisonRow[] {
  const personas = [...new Set(results.map((result) => result.persona))];
  const rows: ComparisonRow[] = [];
  for (const criterion of rubric.criteria) {
    for (const persona of [...personas, 'all']) {
      const differences: number[] = [];
      const baselineScores: number[] = [];
      const candidateScores: number[] = [];
      for (const result of results) {
        if (result.configuration !== baseline || (persona !== 'all' && result.persona !== persona)) continue;
        const partner = results.find(
          (other) =>
            other.configuration === candidate && other.persona === result.persona && other.repeat === result.repeat,
        );
        const before = scoreOf(result, criterion.id);
        const after = partner ? scoreOf(partner, criterion.id) : undefined;
        if (before === undefined || after === undefined) continue;
        baselineScores.push(before);
        candidateScores.push(after);
        differences.push(after - before);
      }
      const baselineMean = mean(baselineScores);
      const candidateMean = mean(candidateScores);
      if (baselineMean === null || candidateMean === null) continue;
      rows.push({
        criterion: criterion.id,
        persona,
        baselineMean,
        candidateMean,
        difference: candidateMean - baselineMean,
        spread: standardDeviation(differences),
        pairs: differences.length,
      });
    }
  }
  return rows;
}

export function summarise(input: {
  results: ConversationResult[];
  rubric: Rubric;
  configurations: CoachConfiguration[];
  days: number;
  repeats: number;
  humanRatings?: readonly HumanRating[];
  /** Overrides every criterion's threshold. */
  minScore?: number | undefined;
}): EvaluationSummary {
  const { results, rubric, configurations } = input;
  const labels = configurations.map((configuration) => configuration.label);
  const rules = Object.entries(RULE_DESCRIPTIONS).map(([rule, description]) => {
    const counts: Record<string, { pass: number; fail: number; notApplicable: number }> = {};
    for (const label of labels) {
      const outcomes = results
        .filter((result) => result.configuration === label)
        .flatMap((result) => result.rules.filter((entry) => entry.rule === rule));
      counts[label] = {
        pass: outcomes.filter((outcome) => outcome.status === 'pass').length,
        fail: outcomes.filter((outcome) => outcome.status === 'fail').length,
        notApplicable: outcomes.filter((outcome) => outcome.status === 'not-applicable').length,
      };
    }
    return { rule, description, counts };
  });
  const failures = results.flatMap((result) =>
    result.rules
      .filter((rule) => rule.status === 'fail')
      .map((rule) => ({ conversation: keyOf(result), rule: rule.rule, detail: rule.detail })),
  );
  const belowThreshold: EvaluationSummary['belowThreshold'] = [];
  const scores = rubric.criteria.map((criterion) => {
    const threshold = input.minScore ?? criterion.threshold ?? null;
    const means: Record<string, number | null> = {};
    for (const label of labels) {
      const values = results
        .filter((result) => result.configuration === label)
        .map((result) => scoreOf(result, criterion.id))
        .filter((score): score is number => score !== undefined);
      means[label] = mean(values);
      const average = means[label];
      if (threshold !== null && average !== null && average !== undefined && average < threshold) {
        belowThreshold.push({ criterion: criterion.id, configuration: label, mean: average, threshold });
      }
    }
    return { criterion: criterion.id, name: criterion.name, threshold, means };
  });
  const [baseline, candidate] = labels;
  const comparison =
    baseline && candidate ? { baseline, candidate, rows: compare(results, rubric, baseline, candidate) } : null;
  const agreement = judgeHumanAgreement(
    rubric,
    (conversation, criterion) => {
      const result = results.find((candidateResult) => keyOf(candidateResult) === conversation);
      return result ? scoreOf(result, criterion) : undefined;
    },
    input.humanRatings ?? [],
  );
  const judgeErrors = results.flatMap((result) =>
    result.judgement?.error ? [{ conversation: keyOf(result), error: result.judgement.error }] : [],
  );
  return {
    days: input.days,
    repeats: input.repeats,
    configurations,
    rules,
    failures,
    scores,
    comparison,
    agreement,
    minScore: input.minScore ?? null,
    judgeErrors,
    belowThreshold,
    passed: failures.length === 0 && belowThreshold.length === 0 && judgeErrors.length === 0,
  };
}
