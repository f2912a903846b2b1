/**
 * Two instances on one PostgreSQL database enrolling at the same moment: each has its own connection pool and
 * participant service, like two server processes. The block state's row lock must keep every block's sequence
 * correct: no position taken twice, no participant allocated twice, every completed block balanced.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { NO_BLOCK, nextAllocation } from '../../src/trials/allocation-sequence.ts';
import { countArms, createTrialFixture, designOf, groupBy, phoneFor } from './trial-fixture.ts';

const pgUrl = process.env['PROMPTPIPE_TEST_PG_URL'];
if (!pgUrl) console.warn('PostgreSQL allocation tests skipped: PROMPTPIPE_TEST_PG_URL is not set');

const design = designOf(`
study: { id: pg-trial, seed: "postgres-seed-99" }
arms: [{ id: coach, label: Coach }, { id: control, label: Control }]
allocation: { method: stratified_blocks, block_sizes: [2, 4, 6], random_block_sizes: true, strata: [language] }
`);

describe.skipIf(!pgUrl)('allocation on two PostgreSQL instances', () => {
  const schema = `promptpipe_test_trials_${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    await client.query(`drop schema if exists "${schema}" cascade`);
    await client.end();
  });

  it('keeps every block correct when both enroll at the same moment', async () => {
    const connectionString = pgUrl ?? '';
    const first = await createTrialFixture(design, {
      store: await createPostgresStore({ connectionString, schema }),
      idPrefix: 'one-',
    });
    const second = await createTrialFixture(design, {
      store: await createPostgresStore({ connectionString, schema }),
      idPrefix: 'two-',
    });
    const enrollments = Array.from({ length: 80 }, (_, index) => {
      const instance = index % 2 === 0 ? first : second;
      return instance.participants.enroll(
        { phoneNumber: phoneFor(index), language: index % 4 < 2 ? 'en' : 'es' },
        { greet: false },
      );
    });
    const enrolled = await Promise.all(enrollments);
    const allocations = await first.store.allocations.list('pg-trial');
    expect(allocations).toHaveLength(80);
    expect(new Set(allocations.map((row) => row.participantId))).toEqual(new Set(enrolled.map((row) => row.id)));
    for (const [stratum, rows] of groupBy(allocations, (row) => row.stratum)) {
      const ordered = rows.sort((left, right) => left.stratumSequence - right.stratumSequence);
      expect(ordered.map((row) => row.stratumSequence)).toEqual(ordered.map((_, index) => index + 1));
      let state = NO_BLOCK;
      for (const row of ordered) {
        const next = nextAllocation(design.design, stratum, state);
        expect([row.armId, row.blockIndex, row.blockPosition]).toEqual([
          next.armId,
          next.block?.index,
          next.block?.position,
        ]);
        state = next.state;
      }
      for (const block of groupBy(ordered, (row) => row.blockIndex).values()) {
        if (block.length === block[0]?.blockSize) {
          expect(countArms(block.map((row) => row.armId))).toEqual({
            coach: block.length / 2,
            control: block.length / 2,
          });
        }
      }
    }
    await first.store.close();
    await second.store.close();
  });
});
