/**
 * The allocation sequence as pure functions: weighted simple allocation within statistical bounds, permuted blocks
 * balanced exactly at every block end, and the same design giving the same sequence (what an auditor recomputes).
 */
import { describe, expect, it } from 'vitest';
import { type BlockState, NO_BLOCK, nextAllocation } from '../../src/trials/allocation-sequence.ts';
import { countArms, designOf } from './trial-fixture.ts';

function sequenceOf(design: ReturnType<typeof designOf>['design'], count: number, stratum = ''): string[] {
  let state: BlockState = NO_BLOCK;
  const arms: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const next = nextAllocation(design, stratum, state);
    arms.push(next.armId);
    state = next.state;
  }
  return arms;
}

const weighted = (seed: string) =>
  designOf(`
study: { id: weighted, seed: "${seed}" }
arms:
  - { id: coach, label: Coach, weight: 2 }
  - { id: control, label: Control, weight: 1 }
allocation: { method: simple }
`).design;

describe('simple allocation', () => {
  it.each(['seed-one-1234', 'seed-two-5678', 'seed-three-9012'])(
    'gives each arm its weight within four standard deviations over 6000 enrollments (seed %s)',
    (seed) => {
      const counts = countArms(sequenceOf(weighted(seed), 6000));
      // Binomial(6000, 2/3): mean 4000, standard deviation √(6000·2/3·1/3) ≈ 36.5.
      expect(Math.abs((counts['coach'] ?? 0) - 4000)).toBeLessThan(4 * 36.5);
      expect((counts['coach'] ?? 0) + (counts['control'] ?? 0)).toBe(6000);
    },
  );

  it('records the draw that chose the arm', () => {
    const next = nextAllocation(weighted('seed-one-1234'), '', NO_BLOCK);
    expect(next.draw).toBeGreaterThanOrEqual(0);
    expect(next.draw).toBeLessThan(1);
    expect(next.armId).toBe((next.draw ?? 1) < 2 / 3 ? 'coach' : 'control');
  });

  it('is reproducible from the seed and differs for another seed', () => {
    expect(sequenceOf(weighted('seed-one-1234'), 200)).toEqual(sequenceOf(weighted('seed-one-1234'), 200));
    expect(sequenceOf(weighted('seed-one-1234'), 200)).not.toEqual(sequenceOf(weighted('seed-two-5678'), 200));
  });
});

describe('permuted blocks', () => {
  const blocks = designOf(`
study: { id: blocks, seed: "block-seed-42" }
arms:
  - { id: a, label: A }
  - { id: b, label: B }
  - { id: c, label: C, weight: 2 }
allocation: { method: permuted_blocks, block_sizes: [4, 8, 12], random_block_sizes: true }
`).design;

  it('balances the arms exactly at the end of every block, with block sizes varied at random', () => {
    let state: BlockState = NO_BLOCK;
    const sizes: number[] = [];
    let current: string[] = [];
    for (let index = 0; index < 2000; index += 1) {
      const next = nextAllocation(blocks, '', state);
      current.push(next.armId);
      state = next.state;
      if (state.position === state.blockSize) {
        const counts = countArms(current);
        expect(counts).toEqual({ a: state.blockSize / 4, b: state.blockSize / 4, c: state.blockSize / 2 });
        sizes.push(state.blockSize);
        current = [];
      }
    }
    expect(new Set(sizes)).toEqual(new Set([4, 8, 12]));
  });

  it('orders the blocks differently (not a fixed pattern)', () => {
    const arms = sequenceOf(blocks, 400);
    const firstFours = new Set<string>();
    for (let index = 0; index + 4 <= arms.length; index += 4) firstFours.add(arms.slice(index, index + 4).join());
    expect(firstFours.size).toBeGreaterThan(3);
  });

  it('keeps each stratum on its own sequence', () => {
    expect(sequenceOf(blocks, 60, 'language=en')).not.toEqual(sequenceOf(blocks, 60, 'language=es'));
    expect(sequenceOf(blocks, 60, 'language=en')).toEqual(sequenceOf(blocks, 60, 'language=en'));
  });
});
