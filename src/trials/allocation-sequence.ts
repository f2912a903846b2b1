/**
 * The allocation sequence, as pure functions of the design and a stratum's block state: what the next enrollment of
 * a stratum gets, and the state after it. Storage (the row lock that makes it exactly once) is in
 * `allocate-participant.ts`; keeping this pure is what lets an auditor, or a test, recompute every allocation.
 */
import { keyedStream, keyedUniform, weightedChoice } from './keyed-random.ts';
import type { Arm, StudyDesign } from './study-design.ts';

/** Where a stratum's sequence stands: stored in `allocation_blocks`, one row per (study, stratum). */
export interface BlockState {
  /** The current block, from 0; -1 before the first. */
  blockIndex: number;
  blockSize: number;
  /** How many allocations of the current block are taken. */
  position: number;
  /** How many participants of this stratum were allocated in all (the simple method's draw index). */
  allocated: number;
}

export const NO_BLOCK: BlockState = { blockIndex: -1, blockSize: 0, position: 0, allocated: 0 };

export interface NextAllocation {
  armId: string;
  /** The block and position taken (null for the simple method). */
  block: { index: number; size: number; position: number } | null;
  /** The uniform draw that chose the arm (simple method), for the record; null for blocks. */
  draw: number | null;
  state: BlockState;
}

/** The size of block `blockIndex`: drawn from the sizes, or cycling through them in order. */
export function blockSizeFor(design: StudyDesign, stratum: string, blockIndex: number): number {
  const allocation = design.allocation;
  if (allocation.method === 'simple') throw new RangeError('the simple method has no blocks');
  const sizes = allocation.block_sizes;
  const pick = allocation.random_block_sizes
    ? Math.floor(
        keyedUniform(design.study.seed, {
          studyId: design.study.id,
          stratum,
          index: blockIndex,
          purpose: 'block-size',
          counter: 0,
        }) * sizes.length,
      )
    : blockIndex % sizes.length;
  return sizes[pick] ?? sizes[0] ?? 0;
}

/**
 * The arms of one block, in allocation order: each arm `size × weight / total weight` times, shuffled (Fisher–Yates)
 * with the block's own keyed stream. Never exposed before the allocations it holds are made (concealment).
 */
export function blockSequence(design: StudyDesign, stratum: string, blockIndex: number, size: number): string[] {
  const totalWeight = design.arms.reduce((sum, arm) => sum + arm.weight, 0);
  const sequence = design.arms.flatMap((arm) =>
    Array.from({ length: (size * arm.weight) / totalWeight }, () => arm.id),
  );
  const uniform = keyedStream(design.study.seed, {
    studyId: design.study.id,
    stratum,
    index: blockIndex,
    purpose: 'permutation',
  });
  for (let index = sequence.length - 1; index > 0; index -= 1) {
    const swap = Math.floor(uniform() * (index + 1));
    [sequence[index], sequence[swap]] = [sequence[swap] as string, sequence[index] as string];
  }
  return sequence;
}

/** The next allocation of a stratum whose sequence stands at `state`. */
export function nextAllocation(design: StudyDesign, stratum: string, state: BlockState): NextAllocation {
  if (design.allocation.method === 'simple') {
    const draw = keyedUniform(design.study.seed, {
      studyId: design.study.id,
      stratum,
      index: state.allocated,
      purpose: 'simple',
      counter: 0,
    });
    const armId = weightedChoice(
      design.arms.map((arm: Arm) => ({ option: arm.id, weight: arm.weight })),
      draw,
    );
    return { armId, block: null, draw, state: { ...state, allocated: state.allocated + 1 } };
  }
  const startsBlock = state.blockIndex < 0 || state.position >= state.blockSize;
  const blockIndex = startsBlock ? state.blockIndex + 1 : state.blockIndex;
  const blockSize = startsBlock ? blockSizeFor(design, stratum, blockIndex) : state.blockSize;
  const position = startsBlock ? 0 : state.position;
  const armId = blockSequence(design, stratum, blockIndex, blockSize)[position];
  if (armId === undefined)
    throw new RangeError(`block ${blockIndex} of stratum "${stratum}" has no position ${position}`);
  return {
    armId,
    block: { index: blockIndex, size: blockSize, position },
    draw: null,
    state: { blockIndex, blockSize, position: position + 1, allocated: state.allocated + 1 },
  };
}

/**
 * The stratum of a participant: `field=value` pairs in the design's order, `|`-separated; `''` when the method is
 * not stratified. Values are trimmed and lower-cased so "ES" and "es " fall in one stratum.
 */
export function stratumOf(design: StudyDesign, fields: Readonly<Record<string, string | undefined>>): string {
  if (design.allocation.method !== 'stratified_blocks') return '';
  return design.allocation.strata
    .map((field) => `${field}=${(fields[field] ?? fields[field.toLowerCase()] ?? '').trim().toLowerCase()}`)
    .join('|');
}

/** The bulk-import columns a design stratifies on (`import.site` → `site`), lower case like a CSV header is read. */
export function importColumnsOf(design: StudyDesign): string[] {
  if (design.allocation.method !== 'stratified_blocks') return [];
  return design.allocation.strata
    .filter((field) => field.startsWith('import.'))
    .map((field) => field.slice('import.'.length).toLowerCase());
}
