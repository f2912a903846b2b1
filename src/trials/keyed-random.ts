/**
 * The trial's random numbers: HMAC-SHA256 in counter mode, keyed by the study seed. A draw is a pure function of
 * (seed, study, stratum, block, purpose, counter), so an auditor holding the design can recompute every allocation
 * and decision from the enrollment order alone, and nobody without the seed can predict the next one.
 */
import { createHmac } from 'node:crypto';

/** The coordinates of one draw; every field takes part in the HMAC message. */
export interface DrawKey {
  studyId: string;
  /** `''` when the method is not stratified. */
  stratum: string;
  /** The block (or, for simple allocation, the allocation number; for a decision, its day). */
  index: number | string;
  /** What the draw is for (`block-size`, `permutation`, `simple`, `decision:<id>`…), so uses never share numbers. */
  purpose: string;
  counter: number;
}

/** A uniform number in [0, 1) with 48 bits of precision. */
export function keyedUniform(seed: string, key: DrawKey): number {
  const message = JSON.stringify([key.studyId, key.stratum, key.index, key.purpose, key.counter]);
  const digest = createHmac('sha256', seed).update(message).digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/** A stream of uniforms for one (study, stratum, index, purpose): the counter goes 0, 1, 2, … */
export function keyedStream(seed: string, key: Omit<DrawKey, 'counter'>): () => number {
  let counter = 0;
  return () => keyedUniform(seed, { ...key, counter: counter++ });
}

/** Picks the option whose cumulative weight first exceeds `draw` (weights need not add up to 1). */
export function weightedChoice<Option>(options: readonly { option: Option; weight: number }[], draw: number): Option {
  const total = options.reduce((sum, entry) => sum + entry.weight, 0);
  let cumulative = 0;
  for (const entry of options) {
    cumulative += entry.weight / total;
    if (draw < cumulative) return entry.option;
  }
  // Rounding can leave the cumulative sum a hair under 1: the last option with a weight takes the remainder.
  const last = [...options].reverse().find((entry) => entry.weight > 0) ?? options[options.length - 1];
  if (!last) throw new RangeError('weightedChoice needs at least one option');
  return last.option;
}
