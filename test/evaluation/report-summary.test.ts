/**
 * The report's numbers: the comparison's difference and spread over repeated runs, the gate, and judge–human
 * agreement per criterion on a known example (human ratings matched to the judge's scores by conversation key).
 */
import { describe, expect, it } from 'vitest';
import type { ConversationResult } from '../../src/evaluation/evaluation-run.ts';
import { summarise } from '../../src/evaluation/report-summary.ts';
import type { SimulationRecord } from '../../src/evaluation/simulation-record.ts';
import { parseRubric } from '../../src/research/ratings/rubric.ts';

const rubric = parseRubric(
  'name: r\nscale: { min: 1, max: 3 }\ncriteria:\n  - { id: empathy, name: Empathy, description: d, threshold: 2 }\n',
  'rubric.yaml',
);

function result(configuration: string, persona: string, repeat: number, score: number): ConversationResult {
  return {
    persona,
    configuration,
    repeat,
    record: {} as SimulationRecord,
    rules: [{ rule: 'intake-completes', status: 'pass', detail: '' }],
    judgement: { scores: { empathy: { score, reason: '' } }, prompt: { system: '', user: '' }, answer: '' },
  };
}

const configurations = [{ label: 'A' }, { label: 'B' }];

describe('the evaluation summary', () => {
  it('reports the paired difference and its standard deviation over the repeats', () => {
    const results = [
      result('A', 'ada', 1, 2),
      result('A', 'ada', 2, 2),
      result('B', 'ada', 1, 3),
      result('B', 'ada', 2, 1),
    ];
    const summary = summarise({ results, rubric, configurations, days: 7, repeats: 2 });
    // Differences +1 and −1: mean 0, sample standard deviation √2.
    expect(summary.comparison?.rows.find((row) => row.persona === 'ada')).toMatchObject({
      baselineMean: 2,
      candidateMean: 2,
      difference: 0,
      pairs: 2,
    });
    expect(summary.comparison?.rows[0]?.spread).toBeCloseTo(Math.SQRT2, 10);
    expect(summary.passed).toBe(true);
  });

  it('computes the quadratic-weighted kappa between judge and humans on the textbook example', () => {
    // Ten conversations on a 1-3 scale: 3 (1,1), 1 (1,2), 2 (2,2), 1 (2,3), 2 (3,3), 1 (3,1) → κw = 1 − 0.15/0.345.
    const pairs: [number, number][] = [
      [1, 1],
      [1, 1],
      [1, 1],
      [1, 2],
      [2, 2],
      [2, 2],
      [2, 3],
      [3, 3],
      [3, 3],
      [3, 1],
    ];
    const results = pairs.map(([judge], index) => result('A', `p${index}`, 1, judge));
    const humanRatings = pairs.map(([, human], index) => ({
      conversation: `A/p${index}.1`,
      criterion: 'empathy',
      score: human,
    }));
    humanRatings.push({ conversation: 'A/unknown.1', criterion: 'empathy', score: 3 });
    const summary = summarise({ results, rubric, configurations: [{ label: 'A' }], days: 7, repeats: 1, humanRatings });
    expect(summary.agreement).toHaveLength(1);
    expect(summary.agreement[0]?.items).toBe(10);
    expect(summary.agreement[0]?.kappa).toBeCloseTo(1 - 0.15 / 0.345, 10);
    expect(summary.agreement[0]?.observedAgreement).toBeCloseTo(0.7, 10);
  });

  it('fails the gate for a mean under the threshold or a failed rule', () => {
    const low = summarise({
      results: [result('A', 'ada', 1, 1)],
      rubric,
      configurations: [{ label: 'A' }],
      days: 7,
      repeats: 1,
    });
    expect(low.belowThreshold).toEqual([{ criterion: 'empathy', configuration: 'A', mean: 1, threshold: 2 }]);
    expect(low.passed).toBe(false);
    const failing = result('A', 'ada', 1, 3);
    failing.rules = [{ rule: 'intake-completes', status: 'fail', detail: 'still in INTAKE' }];
    const failed = summarise({ results: [failing], rubric, configurations: [{ label: 'A' }], days: 7, repeats: 1 });
    expect(failed.failures).toEqual([{ conversation: 'A/ada.1', rule: 'intake-completes', detail: 'still in INTAKE' }]);
    expect(failed.passed).toBe(false);
  });
});
