import { describe, expect, it } from 'vitest';
import { cohensKappa, type RatingPair } from '../../src/research/ratings/agreement.ts';

/** `count` items scored `first` by one rater and `second` by the other. */
function cell(first: number, second: number, count: number): RatingPair[] {
  return Array.from({ length: count }, () => ({ first, second }));
}

describe("Cohen's kappa", () => {
  it('gives 0.4 on the textbook yes/no example (20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no)', () => {
    // p_o = 35/50 = 0.7; p_e = 0.5·0.6 + 0.5·0.4 = 0.5; κ = (0.7 − 0.5) / (1 − 0.5) = 0.4.
    const pairs = [...cell(1, 1, 20), ...cell(1, 0, 5), ...cell(0, 1, 10), ...cell(0, 0, 15)];
    const agreement = cohensKappa(pairs, { min: 0, max: 1 }, 'unweighted');
    expect(agreement?.kappa).toBeCloseTo(0.4, 10);
    expect(agreement?.observedAgreement).toBeCloseTo(0.7, 10);
    // With two categories the quadratic weights are the unweighted ones.
    expect(cohensKappa(pairs, { min: 0, max: 1 }, 'quadratic')?.kappa).toBeCloseTo(0.4, 10);
  });

  it('weights a far disagreement more than a near one on an ordinal scale', () => {
    // Three categories 1..3, 10 items: 3 (1,1), 1 (1,2), 2 (2,2), 1 (2,3), 2 (3,3), 1 (3,1).
    // Marginals: first 4,3,3; second 4,3,3. Weights (quadratic, k−1 = 2): |i−j| = 1 → 0.25, 2 → 1.
    // Observed weighted disagreement = (0.25 + 0.25 + 1) / 10 = 0.15.
    // Expected = Σ w·r_i·c_j / 100 = [0.25·(4·3 + 3·4 + 3·3 + 3·3) + 1·(4·3 + 3·4)] / 100 = (0.25·42 + 24) / 100 = 0.345.
    // κ_w = 1 − 0.15 / 0.345 = 0.5652…; unweighted: p_o = 0.7, p_e = (16 + 9 + 9) / 100 = 0.34, κ = 0.36 / 0.66.
    const pairs = [
      ...cell(1, 1, 3),
      ...cell(1, 2, 1),
      ...cell(2, 2, 2),
      ...cell(2, 3, 1),
      ...cell(3, 3, 2),
      ...cell(3, 1, 1),
    ];
    expect(cohensKappa(pairs, { min: 1, max: 3 }, 'quadratic')?.kappa).toBeCloseTo(1 - 0.15 / 0.345, 10);
    expect(cohensKappa(pairs, { min: 1, max: 3 }, 'unweighted')?.kappa).toBeCloseTo(0.36 / 0.66, 10);
  });

  it('is 1 for perfect agreement, undefined without items, and refuses a score off the scale', () => {
    expect(cohensKappa([...cell(4, 4, 3), ...cell(2, 2, 2)], { min: 1, max: 5 })?.kappa).toBe(1);
    expect(cohensKappa([], { min: 1, max: 5 })).toBeUndefined();
    expect(() => cohensKappa([{ first: 6, second: 1 }], { min: 1, max: 5 })).toThrow(/off the scale/);
  });
});
