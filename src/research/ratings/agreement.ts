/**
 * Agreement between two raters of the same items on one ordinal scale (the judge model and a human): Cohen's kappa,
 * unweighted or quadratic-weighted. Quadratic weights count a 1-vs-5 disagreement as worse than a 4-vs-5 one, which
 * suits rubric scores. Pure.
 */

export type KappaWeighting = 'unweighted' | 'quadratic';

export interface RatingPair {
  first: number;
  second: number;
}

export interface Agreement {
  kappa: number;
  /** The share of items both raters scored the same. */
  observedAgreement: number;
  items: number;
}

/**
 * Cohen's kappa over `pairs` scored on the integer scale `min..max`: 1 − Σ wᵢⱼ·Oᵢⱼ / Σ wᵢⱼ·Eᵢⱼ, where O is the
 * observed joint distribution, E the one expected by chance from the two raters' marginals, and w the disagreement
 * weight (0 on the diagonal; 1 off it, or ((i−j)/(k−1))² when quadratic). Undefined without items; 1 when both raters
 * used one and the same score throughout (no disagreement is possible, none happened).
 */
export function cohensKappa(
  pairs: readonly RatingPair[],
  scale: { min: number; max: number },
  weighting: KappaWeighting = 'quadratic',
): Agreement | undefined {
  if (pairs.length === 0) return undefined;
  const categories = scale.max - scale.min + 1;
  const index = (score: number): number => {
    if (!Number.isInteger(score) || score < scale.min || score > scale.max) {
      throw new RangeError(`score ${score} is off the scale ${scale.min}..${scale.max}`);
    }
    return score - scale.min;
  };
  const observed = Array.from({ length: categories }, () => new Array<number>(categories).fill(0));
  const firstMarginal = new Array<number>(categories).fill(0);
  const secondMarginal = new Array<number>(categories).fill(0);
  for (const pair of pairs) {
    const i = index(pair.first);
    const j = index(pair.second);
    (observed[i] as number[])[j] = ((observed[i] as number[])[j] ?? 0) + 1;
    firstMarginal[i] = (firstMarginal[i] ?? 0) + 1;
    secondMarginal[j] = (secondMarginal[j] ?? 0) + 1;
  }
  const total = pairs.length;
  const weight = (i: number, j: number): number => {
    if (i === j) return 0;
    return weighting === 'quadratic' ? ((i - j) / (categories - 1)) ** 2 : 1;
  };
  let observedDisagreement = 0;
  let expectedDisagreement = 0;
  let agreed = 0;
  for (let i = 0; i < categories; i += 1) {
    for (let j = 0; j < categories; j += 1) {
      const count = observed[i]?.[j] ?? 0;
      if (i === j) agreed += count;
      observedDisagreement += (weight(i, j) * count) / total;
      expectedDisagreement += (weight(i, j) * (firstMarginal[i] ?? 0) * (secondMarginal[j] ?? 0)) / (total * total);
    }
  }
  const kappa = expectedDisagreement === 0 ? 1 : 1 - observedDisagreement / expectedDisagreement;
  return { kappa, observedAgreement: agreed / total, items: total };
}
