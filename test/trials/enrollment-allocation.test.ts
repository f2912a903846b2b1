/**
 * Allocation at enrollment, through the participant service and a real store: once per participant, in the
 * enrollment's commit, stratified blocks balanced per stratum, the same design and enrollment order giving the same
 * arms, and concurrent enrollment keeping the blocks correct (SQLite here; PostgreSQL in `postgres-allocation`).
 */
import { describe, expect, it } from 'vitest';
import { NO_BLOCK, nextAllocation } from '../../src/trials/allocation-sequence.ts';
import { countArms, createTrialFixture, designOf, groupBy, phoneFor } from './trial-fixture.ts';

const stratified = designOf(`
study: { id: stratified-trial, seed: "stratified-seed-7" }
arms:
  - { id: coach, label: Coach }
  - { id: static, label: Static control }
allocation:
  method: stratified_blocks
  block_sizes: [2, 4]
  random_block_sizes: true
  strata: [language, import.site]
`);

const languages = ['en', 'es'];
const sites = ['north', 'south', 'east'];

describe('allocation at enrollment', () => {
  it('allocates once, in the enrollment, and shows the arm on the participant', async () => {
    const { store, participants } = await createTrialFixture(stratified);
    const enrolled = await participants.enroll(
      { phoneNumber: phoneFor(1), language: 'es', importColumns: { site: 'North' } },
      { greet: false },
    );
    expect(['coach', 'static']).toContain(enrolled.arm);
    const allocation = await store.allocations.get(enrolled.id);
    expect(allocation).toMatchObject({
      armId: enrolled.arm,
      allocatedArmId: enrolled.arm,
      stratum: 'language=es|import.site=north',
      method: 'stratified_blocks',
      blockIndex: 0,
      blockPosition: 0,
      stratumSequence: 1,
      designHash: stratified.hash,
    });
    expect((await participants.get(enrolled.id)).arm).toBe(enrolled.arm);
    expect((await participants.list()).map((participant) => participant.arm)).toEqual([enrolled.arm]);
    const events = await store.events.list({ participantId: enrolled.id });
    expect(events.find((event) => event.type === 'participant-allocated')?.data).toMatchObject({
      arm: enrolled.arm,
      design_hash: stratified.hash,
    });
    await store.close();
  });

  it('allocates nobody when the enrollment fails (a duplicate number), and leaves the block untouched', async () => {
    const { store, participants } = await createTrialFixture(stratified);
    await participants.enroll({ phoneNumber: phoneFor(1), language: 'en' }, { greet: false });
    await expect(participants.enroll({ phoneNumber: phoneFor(1), language: 'en' }, { greet: false })).rejects.toThrow(
      /already enrolled/,
    );
    const [block] = await store.allocations.blockStates('stratified-trial');
    expect(block?.allocated).toBe(1);
    await store.close();
  });

  it('balances the stratified blocks per stratum, and an auditor recomputes every arm from the order', async () => {
    const { store, participants } = await createTrialFixture(stratified);
    for (let index = 0; index < 96; index += 1) {
      await participants.enroll(
        {
          phoneNumber: phoneFor(index),
          language: languages[index % 2] ?? 'en',
          importColumns: { site: sites[Math.floor(index / 2) % 3] ?? '' },
        },
        { greet: false },
      );
    }
    const allocations = await store.allocations.list('stratified-trial');
    expect(allocations).toHaveLength(96);
    const byStratum = groupBy(allocations, (allocation) => allocation.stratum);
    expect(byStratum.size).toBe(6);
    for (const [stratum, rows] of byStratum) {
      const ordered = rows.sort((left, right) => left.stratumSequence - right.stratumSequence);
      // The auditor: the design and the stratum's enrollment order give the same arms.
      let state = NO_BLOCK;
      for (const row of ordered) {
        const next = nextAllocation(stratified.design, stratum, state);
        expect(row.armId).toBe(next.armId);
        state = next.state;
      }
      // Every completed block is exactly balanced.
      const completed = groupBy(ordered, (row) => row.blockIndex);
      for (const block of completed.values()) {
        if (block.length === block[0]?.blockSize) {
          expect(countArms(block.map((row) => row.armId))).toEqual({
            coach: block.length / 2,
            static: block.length / 2,
          });
        }
      }
    }
    await store.close();
  });

  it('gives the same arms for the same design and enrollment order, in another database', async () => {
    const armsOf = async () => {
      const { store, participants } = await createTrialFixture(stratified);
      const arms: (string | undefined)[] = [];
      for (let index = 0; index < 30; index += 1) {
        const language = languages[index % 2] ?? 'en';
        arms.push((await participants.enroll({ phoneNumber: phoneFor(index), language }, { greet: false })).arm);
      }
      await store.close();
      return arms;
    };
    expect(await armsOf()).toEqual(await armsOf());
  });

  it('keeps the blocks correct under concurrent enrollment (SQLite), one allocation each', async () => {
    const blocks = designOf(`
study: { id: concurrent, seed: "concurrent-seed-1" }
arms: [{ id: a, label: A }, { id: b, label: B }, { id: c, label: C }]
allocation: { method: permuted_blocks, block_sizes: [3, 6], random_block_sizes: true }
`);
    const { store, participants } = await createTrialFixture(blocks);
    const enrolled = await Promise.all(
      Array.from({ length: 60 }, (_, index) => participants.enroll({ phoneNumber: phoneFor(index) }, { greet: false })),
    );
    const allocations = await store.allocations.list('concurrent');
    expect(new Set(allocations.map((row) => row.participantId))).toEqual(new Set(enrolled.map((row) => row.id)));
    const positions = allocations.map((row) => `${row.blockIndex}:${row.blockPosition}`);
    expect(new Set(positions).size).toBe(60);
    expect(allocations.map((row) => row.stratumSequence).sort((left, right) => left - right)).toEqual(
      Array.from({ length: 60 }, (_, index) => index + 1),
    );
    await store.close();
  });

  it('allocates nothing and shows no arm without a design (one implicit arm, as before)', async () => {
    const { store, participants } = await createTrialFixture(undefined);
    const enrolled = await participants.enroll({ phoneNumber: phoneFor(1) }, { greet: false });
    expect(enrolled.arm).toBeUndefined();
    expect(await store.allocations.get(enrolled.id)).toBeUndefined();
    await store.close();
  });
});
